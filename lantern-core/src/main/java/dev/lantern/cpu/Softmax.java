package dev.lantern.cpu;

import jdk.incubator.vector.FloatVector;

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
        float max = Rows.max(row, n) * scale;
        if (scale < 0) {
            max = Float.NEGATIVE_INFINITY;
            for (int j = 0; j < n; j++) {
                max = Math.max(max, row[j] * scale);
            }
        }
        int i = 0;
        float sum = 0;
        if (CpuConfig.VECTOR) {
            FloatVector acc = FloatVector.zero(F);
            for (int bound = F.loopBound(n); i < bound; i += F.length()) {
                FloatVector e = VMath.exp(FloatVector.fromArray(F, row, i).mul(scale).sub(max));
                e.intoArray(row, i);
                acc = acc.add(e);
            }
            sum = Rows.hsum(acc);
        }
        for (; i < n; i++) {
            row[i] = VMath.exp(row[i] * scale - max);
            sum += row[i];
        }
        Rows.affine(row, 0f, 1f / sum, null, null, n);
    }
}
