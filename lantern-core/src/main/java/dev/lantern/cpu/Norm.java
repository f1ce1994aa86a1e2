package dev.lantern.cpu;

import jdk.incubator.vector.FloatVector;

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
            float[][] buf = Rows.buffers(3, Math.max(d, CpuConfig.F.length()));
            float[] h = buf[0];
            Convert.loadRow(x, Iter.rowOffset(x, r), h, d);
            if (residual != null) {
                Convert.loadRow(residual, Iter.rowOffset(residual, r), buf[1], d);
                BinaryFn.ADD.apply(h, buf[1], h, d);
            }
            if (sumOut != null) {
                Convert.storeRow(h, sumOut, Iter.rowOffset(sumOut, r), d);
            }
            normalize(h, d, wf, bf, eps, centre, buf[2]);
            Convert.storeRow(h, out, Iter.rowOffset(out, r), d);
        });
    }

    /**
     * h[0..d) normalised in place: statistics in f32, two passes (mean, then centred squares), each
     * over four vector accumulators (one FMA chain was latency-bound: 16 dependent FMAs per 256-wide
     * row), added pairwise and then in lane order through {@code lanes}, a scratch of one vector.
     */
    static void normalize(float[] h, int d, float[] wf, float[] bf, float eps, boolean centre, float[] lanes) {
        float mean = centre ? sum4(h, 0f, false, d, lanes) / d : 0f;
        float var = sum4(h, mean, true, d, lanes) / d;
        float inv = (float) (1 / Math.sqrt(var + eps));
        Rows.affine(h, mean, inv, wf, bf, d);
    }

    /** Σ a[i] (squares false) or Σ (a[i] − c)² (squares true): four accumulators, then a scalar tail. */
    private static float sum4(float[] a, float c, boolean squares, int n, float[] lanes) {
        int i = 0;
        float s = 0;
        if (CpuConfig.VECTOR) {
            var f = CpuConfig.F;
            int w = f.length();
            FloatVector a0 = FloatVector.zero(f), a1 = a0, a2 = a0, a3 = a0;
            for (int bound = n - n % (4 * w); i < bound; i += 4 * w) {
                FloatVector x0 = FloatVector.fromArray(f, a, i);
                FloatVector x1 = FloatVector.fromArray(f, a, i + w);
                FloatVector x2 = FloatVector.fromArray(f, a, i + 2 * w);
                FloatVector x3 = FloatVector.fromArray(f, a, i + 3 * w);
                if (squares) {
                    x0 = x0.sub(c);
                    x1 = x1.sub(c);
                    x2 = x2.sub(c);
                    x3 = x3.sub(c);
                    a0 = x0.fma(x0, a0);
                    a1 = x1.fma(x1, a1);
                    a2 = x2.fma(x2, a2);
                    a3 = x3.fma(x3, a3);
                } else {
                    a0 = a0.add(x0);
                    a1 = a1.add(x1);
                    a2 = a2.add(x2);
                    a3 = a3.add(x3);
                }
            }
            for (int bound = f.loopBound(n); i < bound; i += w) {
                FloatVector x0 = FloatVector.fromArray(f, a, i);
                if (squares) {
                    x0 = x0.sub(c);
                    a0 = x0.fma(x0, a0);
                } else {
                    a0 = a0.add(x0);
                }
            }
            a0.add(a1).add(a2.add(a3)).intoArray(lanes, 0);
            for (int l = 0; l < w; l++) {
                s += lanes[l];
            }
        }
        for (; i < n; i++) {
            float v = squares ? (a[i] - c) * (a[i] - c) : a[i];
            s += v;
        }
        return s;
    }
}
