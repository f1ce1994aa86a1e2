package dev.lantern.cpu;

import jdk.incubator.vector.FloatVector;

import static dev.lantern.cpu.CpuConfig.F;

/**
 * Rotary position embedding, rotate-half convention (Llama/HF) on x (batch, heads, seq, d):
 * for i < d/2, θ_i = base^(−2i/d), angle = (pos + offset)·θ_i, pos = seq index;
 * out[i] = x[i]·cos − x[i+d/2]·sin, out[i+d/2] = x[i+d/2]·cos + x[i]·sin.
 * The (seq, d/2) cos/sin tables are computed once per call in float64; {@code inverse} negates sin.
 */
public final class Rope {
    private Rope() {}

    public static void run(View x, View out, double base, long offset) {
        run(x, out, base, offset, false);
    }

    /** With {@code inverse}, the rotation by −angle (rope's gradient, and its inverse: R(θ)ᵀ = R(−θ)). */
    public static void run(View x, View out, double base, long offset, boolean inverse) {
        int seq = x.shape().dim(2);
        int d = x.shape().dim(3);
        int half = d / 2;
        float[] cos = new float[seq * half];
        float[] sin = new float[seq * half];
        for (int p = 0; p < seq; p++) {
            for (int i = 0; i < half; i++) {
                double angle = (p + offset) * Math.pow(base, -2.0 * i / d);
                cos[p * half + i] = (float) Math.cos(angle);
                sin[p * half + i] = (float) (inverse ? -Math.sin(angle) : Math.sin(angle));
            }
        }
        Rows.forEachRow(x.shape().rows(), d, r -> {
            float[][] buf = Rows.buffers(2, d);
            float[] in = buf[0];
            float[] o = buf[1];
            Convert.loadRow(x, Iter.rowOffset(x, r), in, d);
            int t = (int) (r % seq) * half;
            int i = 0;
            for (int bound = CpuConfig.vectorBound(half); i < bound; i += F.length()) {
                FloatVector x0 = FloatVector.fromArray(F, in, i);
                FloatVector x1 = FloatVector.fromArray(F, in, i + half);
                FloatVector c = FloatVector.fromArray(F, cos, t + i);
                FloatVector s = FloatVector.fromArray(F, sin, t + i);
                x0.mul(c).sub(x1.mul(s)).intoArray(o, i);
                x1.mul(c).add(x0.mul(s)).intoArray(o, i + half);
            }
            for (; i < half; i++) {
                float x0 = in[i];
                float x1 = in[i + half];
                o[i] = x0 * cos[t + i] - x1 * sin[t + i];
                o[i + half] = x1 * cos[t + i] + x0 * sin[t + i];
            }
            Convert.storeRow(o, out, Iter.rowOffset(out, r), d);
        });
    }
}
