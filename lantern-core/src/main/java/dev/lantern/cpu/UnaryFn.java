package dev.lantern.cpu;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

import static dev.lantern.cpu.CpuConfig.F;

/**
 * Elementwise unary functions, each with a vector form and the scalar form used for tails and
 * when vectorisation is off. Both compute in f32; exp and tanh use the Vector API's intrinsics.
 */
public enum UnaryFn {
    IDENTITY {
        @Override public float apply(float x) { return x; }
        @Override public FloatVector apply(FloatVector x) { return x; }
    },
    NEG {
        @Override public float apply(float x) { return -x; }
        @Override public FloatVector apply(FloatVector x) { return x.neg(); }
    },
    RELU {
        @Override public float apply(float x) { return x > 0 ? x : 0f; }
        @Override public FloatVector apply(FloatVector x) { return x.max(0f); }
    },
    EXP {
        @Override public float apply(float x) { return (float) Math.exp(x); }
        @Override public FloatVector apply(FloatVector x) { return x.lanewise(VectorOperators.EXP); }
    },
    TANH {
        @Override public float apply(float x) { return (float) Math.tanh(x); }
        @Override public FloatVector apply(FloatVector x) { return x.lanewise(VectorOperators.TANH); }
    },
    /** x·sigmoid(x) = x / (1 + e^−x). */
    SILU {
        @Override public float apply(float x) { return x / (1f + (float) Math.exp(-x)); }
        @Override public FloatVector apply(FloatVector x) { return x.div(x.neg().lanewise(VectorOperators.EXP).add(1f)); }
    },
    /** 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). */
    GELU_TANH {
        @Override public float apply(float x) {
            return 0.5f * x * (1f + (float) Math.tanh(GELU_C * (x + 0.044715f * x * x * x)));
        }
        @Override public FloatVector apply(FloatVector x) {
            FloatVector inner = x.mul(x).mul(x).mul(0.044715f).add(x).mul(GELU_C);
            return x.mul(0.5f).mul(inner.lanewise(VectorOperators.TANH).add(1f));
        }
    },
    /** 0.5·x·(1 + erf(x/√2)), erf by Abramowitz–Stegun 7.1.26 (absolute error ≤ 1.5e-7). */
    GELU_ERF {
        @Override public float apply(float x) { return 0.5f * x * (1f + erf(x * INV_SQRT2)); }
        @Override public FloatVector apply(FloatVector x) { return x.mul(0.5f).mul(erf(x.mul(INV_SQRT2)).add(1f)); }
    };

    static final float GELU_C = (float) Math.sqrt(2 / Math.PI);
    static final float INV_SQRT2 = (float) (1 / Math.sqrt(2));
    private static final float P = 0.3275911f;
    private static final float A1 = 0.254829592f;
    private static final float A2 = -0.284496736f;
    private static final float A3 = 1.421413741f;
    private static final float A4 = -1.453152027f;
    private static final float A5 = 1.061405429f;

    public abstract float apply(float x);

    public abstract FloatVector apply(FloatVector x);

    /** dst[0..n) = f(src[0..n)). */
    public void apply(float[] src, float[] dst, int n) {
        int i = 0;
        for (int bound = CpuConfig.vectorBound(n); i < bound; i += F.length()) {
            apply(FloatVector.fromArray(F, src, i)).intoArray(dst, i);
        }
        for (; i < n; i++) {
            dst[i] = apply(src[i]);
        }
    }

    static float erf(float x) {
        float ax = Math.abs(x);
        float t = 1f / (1f + P * ax);
        float poly = ((((A5 * t + A4) * t + A3) * t + A2) * t + A1) * t;
        float y = 1f - poly * (float) Math.exp(-ax * ax);
        return Math.copySign(y, x);
    }

    static FloatVector erf(FloatVector x) {
        FloatVector ax = x.abs();
        FloatVector t = ax.mul(P).add(1f);
        t = FloatVector.broadcast(F, 1f).div(t);
        FloatVector poly = t.mul(A5).add(A4).mul(t).add(A3).mul(t).add(A2).mul(t).add(A1).mul(t);
        FloatVector e = ax.mul(ax).neg().lanewise(VectorOperators.EXP);
        FloatVector y = poly.mul(e).neg().add(1f);
        // copy x's sign onto y: erf is odd
        return y.blend(y.neg(), x.lt(0f));
    }

    /** The function for an IR elementwise op's gelu "approximate" attribute. */
    public static UnaryFn gelu(boolean tanh) {
        return tanh ? GELU_TANH : GELU_ERF;
    }
}
