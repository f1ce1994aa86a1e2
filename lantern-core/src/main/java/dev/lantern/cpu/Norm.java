package dev.lantern.cpu;

/**
 * layer_norm and rms_norm over the last axis, each with an optional fused residual prologue:
 * h = x + r is normalised, and h itself is written to {@code sumOut} when given (the pre-norm
 * block's residual stream). Statistics in f32, two passes (mean, then centred squares).
 */
public final class Norm {
    private Norm() {}

    /** out = (h − mean)/√(var + eps)·w (+ b), h = x (+ residual); x, residual, out, sumOut (..., D); w, b (D). */
    public static void layerNorm(View x, View residual, View w, View b, float eps, View out, View sumOut) {
        run(x, residual, w, b, eps, out, sumOut, true);
    }

    /** out = h/√(mean(h²) + eps)·w, h = x (+ residual). */
    public static void rmsNorm(View x, View residual, View w, float eps, View out, View sumOut) {
        run(x, residual, w, null, eps, out, sumOut, false);
    }

    private static void run(View x, View residual, View w, View b, float eps, View out, View sumOut, boolean centre) {
        int d = x.shape().last();
        float[] wf = Rows.vector(w);
        float[] bf = Rows.vector(b);
        Rows.forEachRow(x.shape().rows(), d, r -> {
            float[][] buf = Rows.buffers(2, d);
            float[] h = buf[0];
            Convert.loadRow(x, Iter.rowOffset(x, r), h, d);
            if (residual != null) {
                Convert.loadRow(residual, Iter.rowOffset(residual, r), buf[1], d);
                BinaryFn.ADD.apply(h, buf[1], h, d);
            }
            if (sumOut != null) {
                Convert.storeRow(h, sumOut, Iter.rowOffset(sumOut, r), d);
            }
            float mean = centre ? Rows.sum(h, d) / d : 0f;
            float var = Rows.sumSquares(h, mean, d) / d;
            float inv = (float) (1 / Math.sqrt(var + eps));
            Rows.affine(h, mean, inv, wf, bf, d);
            Convert.storeRow(h, out, Iter.rowOffset(out, r), d);
        });
    }
}
