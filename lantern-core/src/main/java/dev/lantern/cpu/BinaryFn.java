package dev.lantern.cpu;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

import static dev.lantern.cpu.CpuConfig.F;

/**
 * Elementwise binary functions in f32. As in {@link UnaryFn}, each has its own vector loop,
 * chosen by one switch outside it, so that C2 inlines the vector ops (no boxing). The gradient
 * helpers ({@code a} = x, {@code b} = dy: dy·f'(x)) use {@link VMath}'s exp and tanh and
 * {@link UnaryFn}'s erf, with the scalar form doing the vector form's operations in the same order,
 * so that both paths give the same bits.
 */
public enum BinaryFn {
    ADD, SUB, MUL, DIV, MAX, MIN,
    /** dy · d/dx gelu_tanh(x). */
    GELU_TANH_GRAD,
    /** dy · d/dx gelu_erf(x). */
    GELU_ERF_GRAD,
    /** dy · d/dx silu(x). */
    SILU_GRAD,
    /** dy where x &gt; 0, else 0. */
    RELU_GRAD;

    private static final float INV_SQRT_2PI = (float) (1 / Math.sqrt(2 * Math.PI));
    private static final float GELU_K = 0.044715f;
    private static final float GELU_3K = 3f * 0.044715f;

    public float apply(float a, float b) {
        return switch (this) {
            case ADD -> a + b;
            case SUB -> a - b;
            case MUL -> a * b;
            case DIV -> a / b;
            case MAX -> Math.max(a, b);
            case MIN -> Math.min(a, b);
            case GELU_TANH_GRAD -> b * geluTanhGrad(a);
            case GELU_ERF_GRAD -> b * geluErfGrad(a);
            case SILU_GRAD -> b * siluGrad(a);
            case RELU_GRAD -> a > 0f ? b : 0f;
        };
    }

    /** 0.5·(1 + t) + (1 − t²)·0.5·x·c·(3k·x² + 1), t = tanh(c·(k·x³ + x)), k = 0.044715, c = √(2/π). */
    private static float geluTanhGrad(float x) {
        float x2 = x * x;
        float t = VMath.tanh((x2 * x * GELU_K + x) * UnaryFn.GELU_C);
        return (t + 1f) * 0.5f + (-(t * t) + 1f) * (x * 0.5f) * UnaryFn.GELU_C * (x2 * GELU_3K + 1f);
    }

    private static FloatVector geluTanhGrad(FloatVector x) {
        FloatVector x2 = x.mul(x);
        FloatVector t = VMath.tanh(x2.mul(x).mul(GELU_K).add(x).mul(UnaryFn.GELU_C));
        return t.add(1f).mul(0.5f).add(t.mul(t).neg().add(1f).mul(x.mul(0.5f)).mul(UnaryFn.GELU_C).mul(x2.mul(GELU_3K).add(1f)));
    }

    /** Φ(x) + x·φ(x) = 0.5·(1 + erf(x/√2)) + x·e^(−x²/2)/√(2π). */
    private static float geluErfGrad(float x) {
        float cdf = (UnaryFn.erf(x * UnaryFn.INV_SQRT2) + 1f) * 0.5f;
        return cdf + x * (VMath.exp(x * x * -0.5f) * INV_SQRT_2PI);
    }

    private static FloatVector geluErfGrad(FloatVector x) {
        FloatVector cdf = UnaryFn.erf(x.mul(UnaryFn.INV_SQRT2)).add(1f).mul(0.5f);
        return cdf.add(x.mul(VMath.exp(x.mul(x).mul(-0.5f)).mul(INV_SQRT_2PI)));
    }

    /** σ(x)·((1 − σ(x))·x + 1), σ(x) = 1/(e^−x + 1). */
    private static float siluGrad(float x) {
        float s = 1f / (VMath.exp(-x) + 1f);
        return s * ((-s + 1f) * x + 1f);
    }

    private static FloatVector siluGrad(FloatVector x) {
        FloatVector s = FloatVector.broadcast(F, 1f).div(VMath.exp(x.neg()).add(1f));
        return s.mul(s.neg().add(1f).mul(x).add(1f));
    }

    /** dst[0..n) = f(a[0..n), b[0..n)); dst may be a or b. */
    public void apply(float[] a, float[] b, float[] dst, int n) {
        int v = CpuConfig.vectorBound(n);
        switch (this) {
            case ADD -> add(a, b, dst, v);
            case SUB -> sub(a, b, dst, v);
            case MUL -> mul(a, b, dst, v);
            case DIV -> div(a, b, dst, v);
            case MAX -> max(a, b, dst, v);
            case MIN -> min(a, b, dst, v);
            case GELU_TANH_GRAD -> {
                for (int i = 0; i < v; i += F.length()) {
                    FloatVector.fromArray(F, b, i).mul(geluTanhGrad(FloatVector.fromArray(F, a, i))).intoArray(dst, i);
                }
            }
            case GELU_ERF_GRAD -> {
                for (int i = 0; i < v; i += F.length()) {
                    FloatVector.fromArray(F, b, i).mul(geluErfGrad(FloatVector.fromArray(F, a, i))).intoArray(dst, i);
                }
            }
            case SILU_GRAD -> {
                for (int i = 0; i < v; i += F.length()) {
                    FloatVector.fromArray(F, b, i).mul(siluGrad(FloatVector.fromArray(F, a, i))).intoArray(dst, i);
                }
            }
            case RELU_GRAD -> {
                for (int i = 0; i < v; i += F.length()) {
                    FloatVector x = FloatVector.fromArray(F, a, i);
                    FloatVector.fromArray(F, b, i).blend(0f, x.compare(VectorOperators.GT, 0f).not()).intoArray(dst, i);
                }
            }
        }
        for (int i = v; i < n; i++) {
            dst[i] = apply(a[i], b[i]);
        }
    }

    private static void add(float[] a, float[] b, float[] dst, int v) {
        for (int i = 0; i < v; i += F.length()) {
            FloatVector.fromArray(F, a, i).add(FloatVector.fromArray(F, b, i)).intoArray(dst, i);
        }
    }

    private static void sub(float[] a, float[] b, float[] dst, int v) {
        for (int i = 0; i < v; i += F.length()) {
            FloatVector.fromArray(F, a, i).sub(FloatVector.fromArray(F, b, i)).intoArray(dst, i);
        }
    }

    private static void mul(float[] a, float[] b, float[] dst, int v) {
        for (int i = 0; i < v; i += F.length()) {
            FloatVector.fromArray(F, a, i).mul(FloatVector.fromArray(F, b, i)).intoArray(dst, i);
        }
    }

    private static void div(float[] a, float[] b, float[] dst, int v) {
        for (int i = 0; i < v; i += F.length()) {
            FloatVector.fromArray(F, a, i).div(FloatVector.fromArray(F, b, i)).intoArray(dst, i);
        }
    }

    private static void max(float[] a, float[] b, float[] dst, int v) {
        for (int i = 0; i < v; i += F.length()) {
            FloatVector.fromArray(F, a, i).max(FloatVector.fromArray(F, b, i)).intoArray(dst, i);
        }
    }

    private static void min(float[] a, float[] b, float[] dst, int v) {
        for (int i = 0; i < v; i += F.length()) {
            FloatVector.fromArray(F, a, i).min(FloatVector.fromArray(F, b, i)).intoArray(dst, i);
        }
    }
}
