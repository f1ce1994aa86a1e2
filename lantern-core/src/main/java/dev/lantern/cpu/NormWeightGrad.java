package dev.lantern.cpu;

/**
 * norm_weight_grad: dw[j] = Σ_r dy[r, j]·x̂[r, j] over the rows of x and dy (..., D), x̂ each row
 * normalised in f32 exactly as {@link Norm} does (with a weight of ones, so the same bits as the
 * unfused norm(x, ones)), never stored. Two stages, in an order fixed by the shapes alone:
 * <pre>
 *   chunk c of at most ceil(rows / CHUNKS) consecutive rows (one task each, in parallel):
 *       part[c][j] = Σ_{r in c, in order} (double) (dy[r, j]·x̂[r, j])       the product in f32, as mul's
 *   dw[j] = Σ_{c in order} part[c][j]                                       in double, then rounded once
 * </pre>
 * so the result is the same for any thread count (the determinism mode). The partials are
 * CHUNKS × D doubles, not the (rows, D) x̂ and product of the composition.
 */
public final class NormWeightGrad {
    private NormWeightGrad() {}

    /** The most row chunks: enough tasks for any core count, few enough partials to stay small. */
    static final int CHUNKS = 64;

    /** out (D) = Σ over x's rows of dy·x̂; x, dy (..., D) of any float dtype and strides. */
    public static void run(View x, View dy, boolean layer, float eps, View out) {
        int d = x.shape().last();
        long rows = x.shape().rows();
        long chunk = Math.max(1, (rows + CHUNKS - 1) / CHUNKS);
        int tasks = (int) ((rows + chunk - 1) / chunk);
        double[][] part = new double[tasks][d];
        Parallel.forEach(tasks, c -> {
            float[][] buf = Rows.buffers(3, Math.max(d, CpuConfig.F.length()));
            float[] h = buf[0];
            float[] g = buf[1];
            double[] acc = part[c];
            for (long r = c * chunk, end = Math.min(rows, r + chunk); r < end; r++) {
                Convert.loadRow(x, Iter.rowOffset(x, r), h, d);
                Norm.normalize(h, d, null, null, eps, layer, buf[2]);
                Convert.loadRow(dy, Iter.rowOffset(dy, r), g, d);
                for (int j = 0; j < d; j++) {
                    acc[j] += g[j] * h[j];
                }
            }
        });
        float[] dw = new float[d];
        for (int j = 0; j < d; j++) {
            double s = 0;
            for (double[] p : part) {
                s += p[j];
            }
            dw[j] = (float) s;
        }
        Convert.store(dw, 0, out.segment(), out.dtype(), out.offset(), out.strides()[0], d);
    }
}
