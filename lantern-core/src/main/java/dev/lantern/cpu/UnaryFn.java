package dev.lantern.cpu;

import dev.lantern.tensor.Half;
import jdk.incubator.vector.FloatVector;

import static dev.lantern.cpu.CpuConfig.F;

/**
 * Elementwise unary functions, each with a vector form and the scalar form used for tails and
 * when vectorisation is off. Both compute in f32 with the same operations in the same order
 * (exp and tanh from {@link VMath}), so results do not depend on the path or the JIT tier.
 *
 * <p>NOTE: each function has its own vector loop, chosen by one switch outside it. A shared loop
 * calling a per-function {@code apply(FloatVector)} sees many receivers (or one large switch), C2
 * does not inline it, and every vector is boxed: RELU measured 1.6 ns/element that way, 0.07 now.
 * So there is no public vector form: work on arrays.
 */
public enum UnaryFn {
    IDENTITY,
    NEG,
    RELU,
    EXP,
    TANH,
    /** x·sigmoid(x) = x / (1 + e^−x). */
    SILU,
    /**
     * 0.5·x·(1 + tanh(u)), u = √(2/π)·(x + 0.044715·x³), computed as the identical x / (1 + e^(−2u)):
     * one exp instead of a tanh (several times cheaper in the Vector API), and no cancellation
     * where tanh(u) is near −1. The exp argument −2u is x·(x²·GELU_K1 + GELU_K0): one multiply and
     * one fused multiply-add.
     */
    GELU_TANH,
    /** 0.5·x·(1 + erf(x/√2)), erf by Abramowitz–Stegun 7.1.26 (absolute error ≤ 1.5e-7). */
    GELU_ERF,
    /** x rounded to the nearest bf16 (ties to even) and back: a cast inside a fused expression. Scalar only. */
    ROUND_BF16,
    /** x rounded to the nearest f16 (ties to even) and back. Scalar only. */
    ROUND_F16;

    static final float GELU_C = (float) Math.sqrt(2 / Math.PI);
    /** −2·√(2/π) and −2·√(2/π)·0.044715: GELU_TANH's exp argument is x·(x²·GELU_K1 + GELU_K0). */
    static final float GELU_K0 = (float) (-2 * Math.sqrt(2 / Math.PI));
    static final float GELU_K1 = (float) (-2 * Math.sqrt(2 / Math.PI) * 0.044715);
    static final float INV_SQRT2 = (float) (1 / Math.sqrt(2));
    private static final float P = 0.3275911f;
    private static final float A1 = 0.254829592f;
    private static final float A2 = -0.284496736f;
    private static final float A3 = 1.421413741f;
    private static final float A4 = -1.453152027f;
    private static final float A5 = 1.061405429f;

    public float apply(float x) {
        return switch (this) {
            case IDENTITY -> x;
            case NEG -> -x;
            case RELU -> Math.max(x, 0f); // as the vector body's max: NaN stays NaN (as in PyTorch), -0 gives 0
            case EXP -> VMath.exp(x);
            case TANH -> VMath.tanh(x);
            case SILU -> x / (VMath.exp(-x) + 1f);
            case GELU_TANH -> geluTanh(x);
            case GELU_ERF -> 0.5f * x * (1f + erf(x * INV_SQRT2));
            case ROUND_BF16 -> Half.roundBf16(x);
            case ROUND_F16 -> Half.roundF16(x);
        };
    }

    /** dst[0..n) = f(src[0..n)); src and dst may be the same array. */
    public void apply(float[] src, float[] dst, int n) {
        // the rounding casts have no vector form (rare, and only inside fused expressions): all scalar
        int v = this == ROUND_BF16 || this == ROUND_F16 ? 0 : CpuConfig.vectorBound(n);
        switch (this) {
            case IDENTITY -> System.arraycopy(src, 0, dst, 0, v);
            case NEG -> neg(src, dst, v);
            case RELU -> relu(src, dst, v);
            case EXP -> exp(src, dst, v);
            case TANH -> tanh(src, dst, v);
            case SILU -> silu(src, dst, v);
            case GELU_TANH -> geluTanh(src, dst, v);
            case GELU_ERF -> geluErf(src, dst, v);
            case ROUND_BF16, ROUND_F16 -> { }
        }
        for (int i = v; i < n; i++) {
            dst[i] = apply(src[i]);
        }
    }

    // One vector loop per function, each over [0, v) with v a multiple of the vector length.

    private static void neg(float[] src, float[] dst, int v) {
        for (int i = 0; i < v; i += F.length()) {
            FloatVector x = FloatVector.fromArray(F, src, i);
            x.neg().intoArray(dst, i);
        }
    }

    private static void relu(float[] src, float[] dst, int v) {
        for (int i = 0; i < v; i += F.length()) {
            FloatVector x = FloatVector.fromArray(F, src, i);
            x.max(0f).intoArray(dst, i);
        }
    }

    private static void exp(float[] src, float[] dst, int v) {
        for (int i = 0; i < v; i += F.length()) {
            FloatVector x = FloatVector.fromArray(F, src, i);
            VMath.exp(x).intoArray(dst, i);
        }
    }

    private static void tanh(float[] src, float[] dst, int v) {
        for (int i = 0; i < v; i += F.length()) {
            FloatVector x = FloatVector.fromArray(F, src, i);
            VMath.tanh(x).intoArray(dst, i);
        }
    }

    private static void silu(float[] src, float[] dst, int v) {
        for (int i = 0; i < v; i += F.length()) {
            FloatVector x = FloatVector.fromArray(F, src, i);
            x.div(VMath.exp(x.neg()).add(1f)).intoArray(dst, i);
        }
    }

    private static void geluTanh(float[] src, float[] dst, int v) {
        for (int i = 0; i < v; i += F.length()) {
            FloatVector x = FloatVector.fromArray(F, src, i);
            geluTanh(x).intoArray(dst, i);
        }
    }

    static float geluTanh(float x) {
        return x / (VMath.exp(x * Math.fma(x * x, GELU_K1, GELU_K0)) + 1f);
    }

    /** The vector form of {@link #geluTanh(float)}: the same operations; static, so that C2 inlines it into each loop. */
    static FloatVector geluTanh(FloatVector x) {
        return x.div(VMath.exp(x.mul(x.mul(x).fma(GELU_K1, GELU_K0))).add(1f));
    }

    private static void geluErf(float[] src, float[] dst, int v) {
        for (int i = 0; i < v; i += F.length()) {
            FloatVector x = FloatVector.fromArray(F, src, i);
            x.mul(0.5f).mul(erf(x.mul(INV_SQRT2)).add(1f)).intoArray(dst, i);
        }
    }

    static float erf(float x) {
        float ax = Math.abs(x);
        float t = 1f / (1f + P * ax);
        float poly = ((((A5 * t + A4) * t + A3) * t + A2) * t + A1) * t;
        float y = 1f - poly * VMath.exp(-(ax * ax));
        return x < 0 ? -y : y;
    }

    static FloatVector erf(FloatVector x) {
        FloatVector ax = x.abs();
        FloatVector t = FloatVector.broadcast(F, 1f).div(ax.mul(P).add(1f));
        FloatVector poly = t.mul(A5).add(A4).mul(t).add(A3).mul(t).add(A2).mul(t).add(A1).mul(t);
        FloatVector e = VMath.exp(ax.mul(ax).neg());
        FloatVector y = poly.mul(e).neg().add(1f);
        // copy x's sign onto y: erf is odd
        return y.blend(y.neg(), x.lt(0f));
    }

    /** The function for an IR elementwise op's gelu "approximate" attribute. */
    public static UnaryFn gelu(boolean tanh) {
        return tanh ? GELU_TANH : GELU_ERF;
    }
}
