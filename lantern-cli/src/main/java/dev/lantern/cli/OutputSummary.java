package dev.lantern.cli;

import dev.lantern.tensor.Tensor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What {@code lantern run} prints for one output: enough to tell two runs apart without dumping
 * the values. The sums are over the values as f32, added in float64 in index order; the hash is
 * the first 12 hex digits of the SHA-256 of the values as little-endian f32 bytes (so a bf16 or
 * f16 output hashes as the f32 values it holds, the same bytes {@code --out} writes after the
 * header for f32 and bf16).
 *
 * @param shape as {@code [3,37,50]}
 */
record OutputSummary(String name, String shape, String dtype, double sum, double sumAbs, String sha256) {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    static OutputSummary of(String name, Tensor t) {
        float[] v = t.toFloats();
        double sum = 0;
        double abs = 0;
        for (float x : v) {
            sum += x;
            abs += Math.abs(x);
        }
        byte[] bytes = new byte[v.length * 4];
        MemorySegment.copy(v, 0, MemorySegment.ofArray(bytes), F32, 0, v.length);
        return new OutputSummary(name, shapeText(t.shape().dims()), t.dtype().text(), sum, abs, sha256(bytes).substring(0, 12));
    }

    /** {@code [3,37,50]}; {@code []} for a scalar. */
    static String shapeText(int[] dims) {
        return Arrays.toString(dims).replace(" ", "");
    }

    private static String sha256(byte[] b) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /** The JSON object of one output; the shape as a list of integers. */
    Map<String, Object> json() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        m.put("shape", shape.equals("[]") ? List.of()
                : Arrays.stream(shape.substring(1, shape.length() - 1).split(",")).map(Long::parseLong).toList());
        m.put("dtype", dtype);
        m.put("sum", sum);
        m.put("sum_abs", sumAbs);
        m.put("sha256", sha256);
        return m;
    }

    /** One line of the table. */
    String line(int nameWidth) {
        return String.format(java.util.Locale.ROOT, "%-" + nameWidth + "s  %-14s %-5s sum %.6e  sum|x| %.6e  sha256 %s",
                name, shape, dtype, sum, sumAbs, sha256);
    }
}
