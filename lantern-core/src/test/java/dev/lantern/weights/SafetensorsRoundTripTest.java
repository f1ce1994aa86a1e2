package dev.lantern.weights;

import dev.lantern.tensor.Half;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link SafetensorsWriter} then {@link SafetensorsFile}: every dtype, byte for byte, and the writer's promises. */
class SafetensorsRoundTripTest {
    private static final long SEED = 20261201L;

    @TempDir
    Path dir;

    private record Made(String name, SafetensorsDType dtype, long[] shape, byte[] bytes) {}

    /** One tensor per dtype, with seeded random shapes (a scalar and an empty one among them) and bytes. */
    private static List<Made> tensors(Random r) {
        List<Made> out = new ArrayList<>();
        for (SafetensorsDType d : SafetensorsDType.values()) {
            long[] shape = switch (d) {
                case BOOL -> new long[] {};
                case U8 -> new long[] {0, 3};
                default -> {
                    long[] s = new long[1 + r.nextInt(3)];
                    for (int i = 0; i < s.length; i++) {
                        s[i] = 1 + r.nextInt(5);
                    }
                    yield s;
                }
            };
            long numel = 1;
            for (long x : shape) {
                numel *= x;
            }
            byte[] b = new byte[(int) numel * d.bytes()];
            r.nextBytes(b);
            if (d == SafetensorsDType.BOOL) {
                b[0] = 1;
            }
            out.add(new Made("layer." + d.name().toLowerCase() + ".w", d, shape, b));
        }
        return out;
    }

    private static SafetensorsWriter writer(List<Made> made) {
        SafetensorsWriter w = new SafetensorsWriter().metadata("format", "pt").metadata("step", "12");
        for (Made m : made) {
            w.add(m.name(), m.dtype(), m.shape(), MemorySegment.ofArray(m.bytes()));
        }
        return w;
    }

    @Test
    void everyDtypeSurvivesByteForByte() {
        List<Made> made = tensors(new Random(SEED));
        Path p = dir.resolve("all.safetensors");
        writer(made).write(p);
        try (SafetensorsFile f = SafetensorsFile.open(p)) {
            assertEquals(Map.of("format", "pt", "step", "12"), f.metadata());
            assertEquals(made.size(), f.tensors().size());
            for (Made m : made) {
                TensorView v = f.tensor(m.name());
                assertEquals(m.dtype(), v.dtype());
                assertArrayEquals(m.shape(), v.shape());
                assertArrayEquals(m.bytes(), v.data().toArray(ValueLayout.JAVA_BYTE), m.name());
                assertTrue(v.data().isReadOnly());
                // the writer aligns each tensor to its element size in the file
                assertEquals(0, (f.header().dataStart() + v.info().begin()) % m.dtype().bytes(), m.name());
            }
        }
    }

    @Test
    void floatValuesReadBackThroughEveryFloatFormat() {
        Random r = new Random(SEED + 1);
        float[] x = new float[37];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) r.nextGaussian() * 3;
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment f32 = a.allocate(4L * x.length);
            MemorySegment f16 = a.allocate(2L * x.length);
            MemorySegment bf16 = a.allocate(2L * x.length);
            MemorySegment f64 = a.allocate(8L * x.length);
            for (int i = 0; i < x.length; i++) {
                f32.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, x[i]);
                f16.setAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i, Float.floatToFloat16(x[i]));
                bf16.setAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i, Half.toBf16(x[i]));
                f64.setAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i, x[i]);
            }
            Path p = dir.resolve("floats.safetensors");
            new SafetensorsWriter().add("f32", SafetensorsDType.F32, new long[] {37}, f32)
                    .add("f16", SafetensorsDType.F16, new long[] {37}, f16)
                    .add("bf16", SafetensorsDType.BF16, new long[] {37}, bf16)
                    .add("f64", SafetensorsDType.F64, new long[] {37}, f64).write(p);
            try (SafetensorsFile f = SafetensorsFile.open(p)) {
                float[] g32 = f.tensor("f32").toFloatArray();
                float[] g16 = f.tensor("f16").toFloatArray();
                float[] gbf = f.tensor("bf16").toFloatArray();
                float[] g64 = f.tensor("f64").toFloatArray();
                for (int i = 0; i < x.length; i++) {
                    assertEquals(x[i], g32[i], 0f);
                    assertEquals(x[i], g64[i], 0f);
                    assertEquals(Half.roundF16(x[i]), g16[i], 0f);
                    assertEquals(Half.roundBf16(x[i]), gbf[i], 0f);
                    assertTrue(Math.abs(x[i] - gbf[i]) <= Math.abs(x[i]) * 0x1p-8, "bf16 " + x[i] + " -> " + gbf[i]);
                }
                assertThrows(SafetensorsException.class, () -> f.tensor("nope"));
            }
        }
    }

    @Test
    void theSameTensorsInAnyOrderGiveTheSameBytes() throws IOException {
        List<Made> made = tensors(new Random(SEED + 2));
        Path a = dir.resolve("a.safetensors");
        Path b = dir.resolve("b.safetensors");
        writer(made).write(a);
        List<Made> shuffled = new ArrayList<>(made);
        Collections.shuffle(shuffled, new Random(SEED + 3));
        SafetensorsWriter w = new SafetensorsWriter();
        for (Made m : shuffled) {
            w.add(m.name(), m.dtype(), m.shape(), MemorySegment.ofArray(m.bytes()));
        }
        w.metadata("step", "12").metadata("format", "pt").write(b);
        assertArrayEquals(Files.readAllBytes(a), Files.readAllBytes(b));
        long headerLength = ByteBuffer.wrap(Files.readAllBytes(a), 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
        assertEquals(0, headerLength % 8, "header padded to a multiple of 8");
    }

    @Test
    void overwritingLeavesNoTemporaryFileAndOldMappingsReadable() throws IOException {
        Path p = dir.resolve("ckpt.safetensors");
        byte[] one = {1, 2, 3, 4};
        byte[] two = {9, 8, 7, 6};
        new SafetensorsWriter().add("x", SafetensorsDType.U8, new long[] {4}, MemorySegment.ofArray(one)).write(p);
        try (SafetensorsFile old = SafetensorsFile.open(p)) {
            new SafetensorsWriter().add("x", SafetensorsDType.U8, new long[] {4}, MemorySegment.ofArray(two)).write(p);
            // the rename replaced the directory entry; the old inode, still mapped, is untouched
            assertArrayEquals(one, old.tensor("x").data().toArray(ValueLayout.JAVA_BYTE));
        }
        try (SafetensorsFile now = SafetensorsFile.open(p)) {
            assertArrayEquals(two, now.tensor("x").data().toArray(ValueLayout.JAVA_BYTE));
        }
        try (Stream<Path> s = Files.list(dir)) {
            assertEquals(List.of(p), s.toList());
        }
    }

    @Test
    void aFailedWriteLeavesTheTargetAsItWas() throws IOException {
        Path p = dir.resolve("ckpt.safetensors");
        new SafetensorsWriter().add("x", SafetensorsDType.U8, new long[] {2}, MemorySegment.ofArray(new byte[] {5, 6})).write(p);
        byte[] before = Files.readAllBytes(p);
        MemorySegment dead;
        try (Arena a = Arena.ofConfined()) {
            dead = a.allocate(8);
        }
        SafetensorsWriter w = new SafetensorsWriter().add("x", SafetensorsDType.F64, new long[] {1}, dead);
        assertThrows(IllegalStateException.class, () -> w.write(p));
        assertArrayEquals(before, Files.readAllBytes(p));
        try (Stream<Path> s = Files.list(dir)) {
            assertEquals(List.of(p), s.toList());
        }
    }

    @Test
    void writerRefusesWrongSizesAndDuplicates() {
        SafetensorsWriter w = new SafetensorsWriter().add("a", SafetensorsDType.F32, new long[] {2}, MemorySegment.ofArray(new byte[8]));
        assertThrows(IllegalArgumentException.class, () -> w.add("a", SafetensorsDType.F32, new long[] {2}, MemorySegment.ofArray(new byte[8])));
        assertThrows(IllegalArgumentException.class, () -> w.add("b", SafetensorsDType.F32, new long[] {3}, MemorySegment.ofArray(new byte[8])));
        assertThrows(IllegalArgumentException.class, () -> w.add("__metadata__", SafetensorsDType.U8, new long[] {0}, MemorySegment.NULL));
    }

    @Test
    void viewsDieWithTheFile() {
        Path p = dir.resolve("x.safetensors");
        new SafetensorsWriter().add("x", SafetensorsDType.U8, new long[] {1}, MemorySegment.ofArray(new byte[] {7})).write(p);
        SafetensorsFile f = SafetensorsFile.open(p);
        TensorView v = f.tensor("x");
        assertEquals(7, v.data().get(ValueLayout.JAVA_BYTE, 0));
        f.close();
        assertThrows(IllegalStateException.class, () -> v.data().get(ValueLayout.JAVA_BYTE, 0));
    }

    @Test
    void tensorsListedOutOfOffsetOrderAreAccepted() {
        // the format orders bytes by data_offsets, not by the JSON's key order (as the reference reader does)
        byte[] bytes = SafetensorsFiles.file("{\"b\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[2,4]},"
                + "\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}", SafetensorsFiles.data(4));
        SafetensorsFile f = SafetensorsFile.of(MemorySegment.ofArray(bytes), "mem");
        assertEquals(List.of("a", "b"), f.names());
        assertArrayEquals(new byte[] {3, 4}, f.tensor("b").data().toArray(ValueLayout.JAVA_BYTE));
    }

    @Test
    void zeroSizedTensorsMayShareAnOffset() {
        byte[] bytes = SafetensorsFiles.file("{\"e\":{\"dtype\":\"F32\",\"shape\":[0,4],\"data_offsets\":[0,0]},"
                + "\"f\":{\"dtype\":\"F32\",\"shape\":[4,0],\"data_offsets\":[0,0]},"
                + "\"g\":{\"dtype\":\"U8\",\"shape\":[9223372036854775807,0],\"data_offsets\":[0,0]},"
                + "\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", SafetensorsFiles.data(1));
        SafetensorsFile f = SafetensorsFile.of(MemorySegment.ofArray(bytes), "mem");
        assertEquals(0, f.tensor("g").numel());
        assertEquals(1, f.tensor("a").numel());
    }
}
