package dev.lantern.tensor;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@link Npy} against numpy itself: the files numpy 2.4 wrote (src/test/resources/npy/make-fixtures.py)
 * read back with the values numpy recorded, the writer produces numpy's bytes exactly, and seeded
 * random tensors of every dtype survive a round trip.
 */
class NpyTest {
    @TempDir
    Path dir;

    static Path fixture(String name) throws URISyntaxException {
        return Path.of(NpyTest.class.getResource("/npy/" + name).toURI());
    }

    static double[] values(String name) throws Exception {
        return Files.readAllLines(fixture(name + ".values")).stream().mapToDouble(Double::parseDouble).toArray();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            f32    | f32  | 3,4,5 | f32
            f32-v2 | f32  | 3,4,5 | f32
            f32-v3 | f32  | 3,4,5 | f32
            f16    | f16  | 2,7   | f16
            f64    | f32  | 4,3   | f64
            i64    | i64  | 6     | i64
            i32    | i32  | 2,2   | i32
            bool   | bool | 4     | bool
            scalar | f32  |       | scalar
            empty  | f32  | 0,3   | empty
            """)
    void readsWhatNumpyWrote(String file, String dtype, String shape, String valuesOf) throws Exception {
        Tensor t = Npy.read(fixture(file + ".npy"));
        assertEquals(DType.parse(dtype), t.dtype());
        int[] dims = shape == null ? new int[0] : java.util.Arrays.stream(shape.split(",")).mapToInt(Integer::parseInt).toArray();
        assertEquals(Shape.of(dims), t.shape());
        double[] want = values(valuesOf);
        double[] got = t.toDoubles();
        assertEquals(want.length, got.length);
        for (int i = 0; i < want.length; i++) {
            // f64 is rounded to f32 on read; every other dtype is exact
            double expect = file.equals("f64") ? (float) want[i] : want[i];
            assertEquals(expect, got[i], 0.0, file + "[" + i + "]");
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"f32", "f16", "i64", "i32", "bool", "scalar", "empty"})
    void writesTheBytesNumpyWrites(String name) throws Exception {
        byte[] numpy = Files.readAllBytes(fixture(name + ".npy"));
        Tensor t = Npy.read(fixture(name + ".npy"));
        assertArrayEquals(numpy, Npy.toBytes(t));
    }

    @Test
    void bf16IsWrittenAsF32Exactly() {
        Tensor t = random(DType.BF16, Shape.of(5, 9), 11);
        Tensor back = Npy.read(java.lang.foreign.MemorySegment.ofArray(Npy.toBytes(t)), "bf16");
        assertEquals(DType.F32, back.dtype());
        assertEquals(t.shape(), back.shape());
        assertArrayEquals(t.toFloats(), back.toFloats());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"F32", "F16", "I32", "I64", "BOOL"})
    void seededRandomTensorsRoundTripThroughAFile(DType dtype) throws IOException {
        for (long seed = 1; seed <= 5; seed++) {
            Random r = new Random(seed);
            int rank = r.nextInt(5);
            int[] dims = new int[rank];
            for (int i = 0; i < rank; i++) {
                dims[i] = r.nextInt(seed == 3 ? 1 : 9); // seed 3: zero-size dimensions
            }
            Tensor t = random(dtype, Shape.of(dims), seed);
            Path f = dir.resolve(dtype + "-" + seed + ".npy");
            Npy.write(f, t);
            assertEquals(0, Files.size(f) - t.numel() * dtype.bytes() & 63, "the data starts 64-byte aligned");
            Tensor back = Npy.read(f);
            assertEquals(t.dtype(), back.dtype());
            assertEquals(t.shape(), back.shape());
            assertArrayEquals(t.toDoubles(), back.toDoubles(), 0.0, dtype + " seed " + seed);
        }
    }

    @Test
    void aMissingFileOrAFolderIsTyped() {
        NpyException missing = assertThrows(NpyException.class, () -> Npy.read(dir.resolve("nope.npy")));
        assertEquals(NpyException.Kind.IO, missing.kind());
        assertEquals(dir.resolve("nope.npy") + ": no such file", missing.getMessage());
        assertEquals(NpyException.Kind.IO, assertThrows(NpyException.class, () -> Npy.read(dir)).kind());
    }

    /** Values drawn from N(0, 1) (floats) or a wide integer range, never all zeros. */
    static Tensor random(DType dtype, Shape shape, long seed) {
        Tensor t = Tensor.allocate(dtype, shape);
        Random r = new Random(seed);
        for (long i = 0; i < t.numel(); i++) {
            t.set(i, switch (dtype) {
                case I32, I64 -> r.nextInt(1 << 24) - (1 << 23);
                case BOOL -> r.nextBoolean() ? 1 : 0;
                default -> (float) r.nextGaussian();
            });
        }
        return t;
    }
}
