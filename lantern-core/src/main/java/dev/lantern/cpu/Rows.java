package dev.lantern.cpu;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;

import static dev.lantern.cpu.CpuConfig.F;

/**
 * Shared machinery of the row-wise kernels: per-thread row buffers, a parallel loop over rows, and
 * the vector reductions (sum, max, dot) and row updates they all need, each with a scalar tail.
 */
final class Rows {
    private Rows() {}

    private static final ThreadLocal<float[][]> BUFS = new ThreadLocal<>();

    /** {@code count} per-thread f32 buffers of at least {@code n} elements (contents unspecified). */
    static float[][] buffers(int count, int n) {
        float[][] b = BUFS.get();
        if (b == null || b.length < count || b[0].length < n) {
            int len = Math.max(n, b == null ? 0 : b[0].length);
            b = new float[Math.max(count, 4)][len];
            BUFS.set(b);
        }
        return b;
    }

    /** Runs {@code body(row)} for rows [0, rows), spread over the pool; {@code width} sizes the grain. */
    static void forEachRow(long rows, int width, java.util.function.LongConsumer body) {
        long grain = Math.max(1, 16384 / Math.max(1, width));
        Parallel.forRange(rows, grain, (s, e) -> {
            for (long r = s; r < e; r++) {
                body.accept(r);
            }
        });
    }

    /**
     * The lanes' sum in lane order. NOTE: not {@code reduceLanes(ADD)}, whose float order is
     * unspecified and differs between JIT tiers: that would break bit-identical reruns.
     */
    static float hsum(FloatVector v) {
        float[] lanes = new float[F.length()];
        v.intoArray(lanes, 0);
        float s = 0;
        for (float x : lanes) {
            s += x;
        }
        return s;
    }

    static float sum(float[] a, int n) {
        int i = 0;
        float s = 0;
        if (CpuConfig.VECTOR) {
            FloatVector acc = FloatVector.zero(F);
            for (int bound = F.loopBound(n); i < bound; i += F.length()) {
                acc = acc.add(FloatVector.fromArray(F, a, i));
            }
            s = hsum(acc);
        }
        for (; i < n; i++) {
            s += a[i];
        }
        return s;
    }

    /** Σ (a[i] − c)². */
    static float sumSquares(float[] a, float c, int n) {
        int i = 0;
        float s = 0;
        if (CpuConfig.VECTOR) {
            FloatVector acc = FloatVector.zero(F);
            for (int bound = F.loopBound(n); i < bound; i += F.length()) {
                FloatVector d = FloatVector.fromArray(F, a, i).sub(c);
                acc = d.fma(d, acc);
            }
            s = hsum(acc);
        }
        for (; i < n; i++) {
            s += (a[i] - c) * (a[i] - c);
        }
        return s;
    }

    static float max(float[] a, int n) {
        int i = 0;
        float m = Float.NEGATIVE_INFINITY;
        if (CpuConfig.VECTOR) {
            FloatVector acc = FloatVector.broadcast(F, Float.NEGATIVE_INFINITY);
            for (int bound = F.loopBound(n); i < bound; i += F.length()) {
                acc = acc.max(FloatVector.fromArray(F, a, i));
            }
            m = acc.reduceLanes(VectorOperators.MAX);
        }
        for (; i < n; i++) {
            m = Math.max(m, a[i]);
        }
        return m;
    }

    /** Σ a[ao+i]·b[bo+i]. */
    static float dot(float[] a, int ao, float[] b, int bo, int n) {
        int i = 0;
        float s = 0;
        if (CpuConfig.VECTOR) {
            FloatVector acc = FloatVector.zero(F);
            for (int bound = F.loopBound(n); i < bound; i += F.length()) {
                acc = FloatVector.fromArray(F, a, ao + i).fma(FloatVector.fromArray(F, b, bo + i), acc);
            }
            s = hsum(acc);
        }
        for (; i < n; i++) {
            s += a[ao + i] * b[bo + i];
        }
        return s;
    }

    /** y[yo+i] = y[yo+i]·beta + alpha·x[xo+i]. */
    static void axpby(float alpha, float[] x, int xo, float beta, float[] y, int yo, int n) {
        int i = 0;
        for (int bound = CpuConfig.vectorBound(n); i < bound; i += F.length()) {
            FloatVector.fromArray(F, x, xo + i).mul(alpha).add(FloatVector.fromArray(F, y, yo + i).mul(beta)).intoArray(y, yo + i);
        }
        for (; i < n; i++) {
            y[yo + i] = y[yo + i] * beta + alpha * x[xo + i];
        }
    }

    /** a[i] = (a[i] − shift)·mul·w[i] (+ b[i]); w, b may be null (1 and 0). */
    static void affine(float[] a, float shift, float mul, float[] w, float[] b, int n) {
        int i = 0;
        for (int bound = CpuConfig.vectorBound(n); i < bound; i += F.length()) {
            FloatVector v = FloatVector.fromArray(F, a, i).sub(shift).mul(mul);
            if (w != null) {
                v = v.mul(FloatVector.fromArray(F, w, i));
            }
            if (b != null) {
                v = v.add(FloatVector.fromArray(F, b, i));
            }
            v.intoArray(a, i);
        }
        for (; i < n; i++) {
            float v = (a[i] - shift) * mul;
            if (w != null) {
                v *= w[i];
            }
            if (b != null) {
                v += b[i];
            }
            a[i] = v;
        }
    }

    /** A whole vector (rank-1 view) as f32. */
    static float[] vector(View v) {
        if (v == null) {
            return null;
        }
        int n = v.shape().dim(-1);
        float[] f = new float[n];
        Convert.load(v.segment(), v.dtype(), v.offset(), v.strides()[v.rank() - 1], f, 0, n);
        return f;
    }
}
