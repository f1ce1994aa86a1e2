package dev.lantern.weights;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The load figure: a 2 GB safetensors file (a LLaMA-shaped bf16 checkpoint, 1.07 B parameters,
 * 183 tensors) opens, mapped and validated, in under a second. Opening reads the 8-byte length
 * and the header only, so the test uses a sparse file (no disk blocks, nothing to clean up if it
 * dies); {@link #main} does the same on a file with real bytes in the page cache, and also
 * times a full read of the mapped data for comparison.
 *
 * <pre>
 * java ... dev.lantern.weights.SafetensorsLoadTest [--real] [DIR]
 * </pre>
 */
class SafetensorsLoadTest {
    static final int LAYERS = 20;

    @Test
    void twoGigabyteFileOpensInUnderASecond() throws IOException {
        Path p = Files.createTempFile("lantern-2gb-", ".safetensors");
        try {
            long size = make(p, false);
            assertTrue(size > 2_000_000_000L, "file is " + size + " bytes");
            long[] ns = timeOpens(p, 5);
            long median = ns[ns.length / 2];
            assertTrue(median < 1_000_000_000L, "median open " + median / 1e6 + " ms");
        } finally {
            Files.deleteIfExists(p);
        }
    }

    /** Writes the checkpoint's header, then its data: zeros in a sparse file, or seeded random bytes. */
    static long make(Path p, boolean real) throws IOException {
        StringBuilder json = new StringBuilder("{\"__metadata__\":{\"format\":\"pt\"}");
        long[] offset = {0};
        int[] count = {0};
        java.util.function.BiConsumer<String, long[]> add = (name, shape) -> {
            long bytes = 2 * Arrays.stream(shape).reduce(1, Math::multiplyExact);
            json.append(",\"").append(name).append("\":{\"dtype\":\"BF16\",\"shape\":").append(Arrays.toString(shape).replace(" ", ""))
                    .append(",\"data_offsets\":[").append(offset[0]).append(',').append(offset[0] + bytes).append("]}");
            offset[0] += bytes;
            count[0]++;
        };
        int h = 2048;
        add.accept("model.embed_tokens.weight", new long[] {32000, h});
        for (int l = 0; l < LAYERS; l++) {
            String pre = "model.layers." + l + ".";
            add.accept(pre + "self_attn.q_proj.weight", new long[] {h, h});
            add.accept(pre + "self_attn.k_proj.weight", new long[] {1024, h});
            add.accept(pre + "self_attn.v_proj.weight", new long[] {1024, h});
            add.accept(pre + "self_attn.o_proj.weight", new long[] {h, h});
            add.accept(pre + "mlp.gate_proj.weight", new long[] {5632, h});
            add.accept(pre + "mlp.up_proj.weight", new long[] {5632, h});
            add.accept(pre + "mlp.down_proj.weight", new long[] {h, 5632});
            add.accept(pre + "input_layernorm.weight", new long[] {h});
            add.accept(pre + "post_attention_layernorm.weight", new long[] {h});
        }
        add.accept("model.norm.weight", new long[] {h});
        add.accept("lm_head.weight", new long[] {32000, h});
        json.append('}');
        while (json.length() % 8 != 0) {
            json.append(' ');
        }
        byte[] header = json.toString().getBytes(StandardCharsets.UTF_8);
        long size = 8 + header.length + offset[0];
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            ch.write(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, header.length));
            ch.write(ByteBuffer.wrap(header));
            if (real) {
                ByteBuffer chunk = ByteBuffer.allocate(64 << 20);
                new Random(7).nextBytes(chunk.array());
                while (ch.position() < size) {
                    chunk.clear().limit((int) Math.min(chunk.capacity(), size - ch.position()));
                    ch.write(chunk);
                }
            } else {
                ch.write(ByteBuffer.wrap(new byte[] {0}), size - 1); // a hole up to the last byte
            }
        }
        assertEquals(size, Files.size(p));
        return size;
    }

    /** Nanoseconds for {@code n} opens (map + validate + close), sorted. */
    static long[] timeOpens(Path p, int n) {
        long[] ns = new long[n];
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            try (SafetensorsFile f = SafetensorsFile.open(p)) {
                ns[i] = System.nanoTime() - t0;
                assertEquals(3 + 9 * LAYERS, f.tensors().size());
            }
        }
        Arrays.sort(ns);
        return ns;
    }

    public static void main(String[] args) throws IOException {
        boolean real = Arrays.asList(args).contains("--real");
        Path dir = Path.of(Arrays.stream(args).filter(a -> !a.startsWith("--")).findFirst().orElse("/tmp"));
        Path p = dir.resolve("lantern-load-figure.safetensors");
        try {
            long t0 = System.nanoTime();
            long size = make(p, real);
            System.out.printf("file      %,d bytes (%s), %d tensors, written in %.1f s%n", size, real ? "real bytes" : "sparse",
                    3 + 9 * LAYERS, (System.nanoTime() - t0) / 1e9);
            // wall time suffers from whatever else the machine runs; this thread's CPU time does not
            java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
            long cpu0 = mx.getCurrentThreadCpuTime();
            long wall0 = System.nanoTime();
            SafetensorsFile.open(p).close();
            System.out.printf("first     open in a fresh JVM: %.1f ms wall, %.1f ms CPU (class loading, interpreter)%n",
                    (System.nanoTime() - wall0) / 1e6, (mx.getCurrentThreadCpuTime() - cpu0) / 1e6);
            long cpu1 = mx.getCurrentThreadCpuTime();
            long[] ns = timeOpens(p, 11);
            System.out.printf("open      min %.3f ms, median %.3f ms, max %.3f ms wall over %d more opens (map + validate + close),"
                    + " %.3f ms CPU each on average%n", ns[0] / 1e6, ns[ns.length / 2] / 1e6, ns[ns.length - 1] / 1e6, ns.length,
                    (mx.getCurrentThreadCpuTime() - cpu1) / 1e6 / ns.length);
            System.out.printf("load      %.1f (1-minute load average, %d cores)%n",
                    java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
                    Runtime.getRuntime().availableProcessors());
            try (SafetensorsFile f = SafetensorsFile.open(p)) {
                System.out.printf("header    %,d bytes%n", f.header().headerBytes());
                if (!real) {
                    return; // reading holes measures page faults, not the page cache
                }
                long t1 = System.nanoTime();
                long sum = 0;
                for (TensorInfo t : f.tensors()) {
                    MemorySegment d = f.tensor(t.name()).data();
                    for (long i = 0; i + 8 <= d.byteSize(); i += 4096) {
                        sum += d.get(ValueLayout.JAVA_LONG_UNALIGNED, i);
                    }
                }
                System.out.printf("touch     every page of the data in %.1f ms (checksum %d)%n", (System.nanoTime() - t1) / 1e6, sum);
            }
        } finally {
            Files.deleteIfExists(p);
        }
    }
}
