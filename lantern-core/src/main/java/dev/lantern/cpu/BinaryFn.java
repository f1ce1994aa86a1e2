package dev.lantern.cpu;

import jdk.incubator.vector.FloatVector;

import static dev.lantern.cpu.CpuConfig.F;

/** Elementwise binary functions in f32, vector and scalar forms. */
public enum BinaryFn {
    ADD {
        @Override public float apply(float a, float b) { return a + b; }
        @Override public FloatVector apply(FloatVector a, FloatVector b) { return a.add(b); }
    },
    SUB {
        @Override public float apply(float a, float b) { return a - b; }
        @Override public FloatVector apply(FloatVector a, FloatVector b) { return a.sub(b); }
    },
    MUL {
        @Override public float apply(float a, float b) { return a * b; }
        @Override public FloatVector apply(FloatVector a, FloatVector b) { return a.mul(b); }
    },
    DIV {
        @Override public float apply(float a, float b) { return a / b; }
        @Override public FloatVector apply(FloatVector a, FloatVector b) { return a.div(b); }
    },
    MAX {
        @Override public float apply(float a, float b) { return Math.max(a, b); }
        @Override public FloatVector apply(FloatVector a, FloatVector b) { return a.max(b); }
    },
    MIN {
        @Override public float apply(float a, float b) { return Math.min(a, b); }
        @Override public FloatVector apply(FloatVector a, FloatVector b) { return a.min(b); }
    };

    public abstract float apply(float a, float b);

    public abstract FloatVector apply(FloatVector a, FloatVector b);

    /** dst[0..n) = f(a[0..n), b[0..n)). */
    public void apply(float[] a, float[] b, float[] dst, int n) {
        int i = 0;
        for (int bound = CpuConfig.vectorBound(n); i < bound; i += F.length()) {
            apply(FloatVector.fromArray(F, a, i), FloatVector.fromArray(F, b, i)).intoArray(dst, i);
        }
        for (; i < n; i++) {
            dst[i] = apply(a[i], b[i]);
        }
    }
}
