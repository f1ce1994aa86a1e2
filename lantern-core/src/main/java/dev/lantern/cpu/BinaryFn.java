package dev.lantern.cpu;

import jdk.incubator.vector.FloatVector;

import static dev.lantern.cpu.CpuConfig.F;

/**
 * Elementwise binary functions in f32. As in {@link UnaryFn}, each has its own vector loop,
 * chosen by one switch outside it, so that C2 inlines the vector ops (no boxing).
 */
public enum BinaryFn {
    ADD, SUB, MUL, DIV, MAX, MIN;

    public float apply(float a, float b) {
        return switch (this) {
            case ADD -> a + b;
            case SUB -> a - b;
            case MUL -> a * b;
            case DIV -> a / b;
            case MAX -> Math.max(a, b);
            case MIN -> Math.min(a, b);
        };
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
