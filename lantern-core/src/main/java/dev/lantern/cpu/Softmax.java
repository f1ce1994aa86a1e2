package dev.lantern.cpu;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

import static dev.lantern.cpu.CpuConfig.F;

/**
 * softmax(scale·x) over the last axis. With {@code causal}, row r is query i = r mod S (S = size
 * of axis −2) and keys j > i are masked out: they get 0, and never enter the max or the sum.
 * NOTE: the scale multiplies before the mask and max, as the IR's op defines it.
 */
public final class Softmax {
    private Softmax() {}

    public static void run(View x, View out, float scale, boolean causal) {
        int t = x.shape().last();
        int s = x.rank() >= 2 ? x.shape().dim(-2) : 1;
        Rows.forEachRow(x.shape().rows(), t, r -> {
            float[] row = Rows.buffers(1, t)[0];
            Convert.loadRow(x, Iter.rowOffset(x, r), row, t);
            int limit = causal ? (int) Math.min(t, r % s + 1) : t;
            softmaxRow(row, limit, scale);
            java.util.Arrays.fill(row, limit, t, 0f);
            Convert.storeRow(row, out, Iter.rowOffset(out, r), t);
        });
    }

    /** row[0..n) = softmax(scale·row[0..n)) in place. */
    static void softmaxRow(float[] row, int n, float scale) {
        softmaxRow(row, 0, n, scale);
    }

    /**
     * a[off..off+n) = softmax(scale·a[off..off+n)) in place, for kernels outside this package
     * (the CPU attention's score rows). Exp from {@link VMath} and sums in lane order, so that the
     * bits depend neither on the JIT tier nor on the thread that runs the row.
     */
    public static void softmaxRow(float[] row, int off, int n, float scale) {
        float max = max(row, off, n) * scale;
        if (scale < 0) {
            max = Float.NEGATIVE_INFINITY;
            for (int j = 0; j < n; j++) {
                max = Math.max(max, row[off + j] * scale);
            }
        }
        int i = 0;
        float sum = 0;
        if (CpuConfig.VECTOR) {
            FloatVector acc = FloatVector.zero(F);
            for (int bound = F.loopBound(n); i < bound; i += F.length()) {
                FloatVector e = VMath.exp(FloatVector.fromArray(F, row, off + i).mul(scale).sub(max));
                e.intoArray(row, off + i);
                acc = acc.add(e);
            }
            sum = Rows.hsum(acc);
        }
        for (; i < n; i++) {
            row[off + i] = VMath.exp(row[off + i] * scale - max);
            sum += row[off + i];
        }
        float inv = 1f / sum;
        i = 0;
        for (int bound = CpuConfig.vectorBound(n); i < bound; i += F.length()) {
            FloatVector.fromArray(F, row, off + i).mul(inv).intoArray(row, off + i);
        }
        for (; i < n; i++) {
            row[off + i] *= inv;
        }
    }

    /** The largest of a[off..off+n): max is exact, so any lane order gives the same bits. */
    private static float max(float[] a, int off, int n) {
        int i = 0;
        float m = Float.NEGATIVE_INFINITY;
        if (CpuConfig.VECTOR) {
            FloatVector acc = FloatVector.broadcast(F, Float.NEGATIVE_INFINITY);
            for (int bound = F.loopBound(n); i < bound; i += F.length()) {
                acc = acc.max(FloatVector.fromArray(F, a, off + i));
            }
            m = acc.reduceLanes(VectorOperators.MAX);
        }
        for (; i < n; i++) {
            m = Math.max(m, a[off + i]);
        }
        return m;
    }
}
