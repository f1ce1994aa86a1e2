package dev.lantern.cpu;

import jdk.incubator.vector.FloatVector;

import static dev.lantern.cpu.CpuConfig.F;

/**
 * Elementwise binary functions in f32. As in {@link UnaryFn}, each has its own vector loop,
 * chosen by one switch outside it, so that C2 inlines the vector ops (no boxing). The gradient
 * helpers ({@code a} = x, {@code b} = dy: dy·f'(x)) are scalar only: they run in backward graphs,
 * where the GEMMs dominate, and share {@link UnaryFn}'s exp so that the paths agree.
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

    public float apply(float a, float b) {
        return switch (this) {
            case ADD -> a + b;
            case SUB -> a - b;
            case MUL -> a * b;
            case DIV -> a / b;
            case MAX -> Math.max(a, b);
            case MIN -> Math.min(a, b);
            case GELU_TANH_GRAD -> b * geluTanhGrad(a);
            case GELU_ERF_GRAD -> b * (0.5f * (1f + UnaryFn.erf(a * UnaryFn.INV_SQRT2)) + a * VMath.exp(-0.5f * a * a) * INV_SQRT_2PI);
            case SILU_GRAD -> {
                float s = 1f / (VMath.exp(-a) + 1f);
                yield b * s * (1f + a * (1f - s));
            }
            case RELU_GRAD -> a > 0f ? b : 0f;
        };
    }

    /** 0.5·(1 + t) + 0.5·x·(1 − t²)·c·(1 + 3·0.044715·x²), t = tanh(c·(x + 0.044715·x³)). */
    private static float geluTanhGrad(float x) {
        float t = VMath.tanh(UnaryFn.GELU_C * (x + 0.044715f * x * x * x));
        return 0.5f * (1f + t) + 0.5f * x * (1f - t * t) * UnaryFn.GELU_C * (1f + 3f * 0.044715f * x * x);
    }

    /** dst[0..n) = f(a[0..n), b[0..n)); dst may be a or b. */
    public void apply(float[] a, float[] b, float[] dst, int n) {
        int v = ordinal() > MIN.ordinal() ? 0 : CpuConfig.vectorBound(n); // the gradient helpers: scalar only
        switch (this) {
            case ADD -> add(a, b, dst, v);
            case SUB -> sub(a, b, dst, v);
            case MUL -> mul(a, b, dst, v);
            case DIV -> div(a, b, dst, v);
            case MAX -> max(a, b, dst, v);
            case MIN -> min(a, b, dst, v);
            case GELU_TANH_GRAD, GELU_ERF_GRAD, SILU_GRAD, RELU_GRAD -> { }
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
