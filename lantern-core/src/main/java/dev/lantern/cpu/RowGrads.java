package dev.lantern.cpu;

/**
 * The backward row kernels: softmax_grad, rms_norm_grad and layer_norm_grad, one task per row of
 * the last axis, as the forward kernels are. The norms recompute their row statistics (mean,
 * 1/σ) in f32 from x instead of saving them from the forward: one more read of x per row, and the
 * forward graph stays unchanged. Rows of every operand may be strided; the weight is rank 1.
 */
public final class RowGrads {
    private RowGrads() {}

    /** dx = scale · y · (dy − Σ_row y·dy). */
    public static void softmaxGrad(View y, View dy, View out, float scale) {
        int t = y.shape().last();
        Rows.forEachRow(y.shape().rows(), t, r -> {
            float[][] buf = Rows.buffers(2, t);
            float[] yr = buf[0];
            float[] g = buf[1];
            Convert.loadRow(y, Iter.rowOffset(y, r), yr, t);
            Convert.loadRow(dy, Iter.rowOffset(dy, r), g, t);
            float dot = Rows.dot(yr, 0, g, 0, t);
            for (int j = 0; j < t; j++) {
                g[j] = scale * yr[j] * (g[j] - dot);
            }
            Convert.storeRow(g, out, Iter.rowOffset(out, r), t);
        });
    }

    /**
     * dx of y = x̂·w with x̂ = (x − μ)·r (μ = 0 for rms), r = 1/√(var + eps), g = w·dy:
     * dx = r · (g − mean(g) − x̂ · mean(g·x̂)), without the mean(g) term for rms. A non-null
     * {@code res} (the residual form) is added to dx in f32 before the one rounding to out's dtype.
     */
    public static void normGrad(View x, View w, View dy, View res, View out, float eps, boolean centre) {
        int d = x.shape().last();
        float[] wf = Rows.vector(w);
        Rows.forEachRow(x.shape().rows(), d, r -> {
            float[][] buf = Rows.buffers(3, d);
            float[] h = buf[0];
            float[] g = buf[1];
            Convert.loadRow(x, Iter.rowOffset(x, r), h, d);
            Convert.loadRow(dy, Iter.rowOffset(dy, r), g, d);
            float mean = centre ? Rows.sum(h, d) / d : 0f;
            float inv = (float) (1 / Math.sqrt(Rows.sumSquares(h, mean, d) / d + eps));
            Rows.affine(h, mean, inv, null, null, d); // h = x̂
            BinaryFn.MUL.apply(g, wf, g, d); // g = w·dy
            float gMean = centre ? Rows.sum(g, d) / d : 0f;
            float gx = Rows.dot(g, 0, h, 0, d) / d;
            for (int j = 0; j < d; j++) {
                g[j] = inv * (g[j] - gMean - h[j] * gx);
            }
            if (res != null) {
                float[] rr = buf[2];
                Convert.loadRow(res, Iter.rowOffset(res, r), rr, d);
                BinaryFn.ADD.apply(g, rr, g, d);
            }
            Convert.storeRow(g, out, Iter.rowOffset(out, r), d);
        });
    }
}
