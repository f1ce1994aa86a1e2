package dev.lantern.cpu;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;

import static dev.lantern.cpu.CpuConfig.F;

/**
 * exp and tanh in f32 from additions, multiplications and one division only (Cephes' expf and
 * tanhf polynomials, relative error about 1e-7), in a vector form and a scalar form that compute
 * the same operations in the same order.
 *
 * <p>Why not {@code lanewise(EXP)}: its result depends on the JIT tier (C2 calls SVML, the
 * interpreter and C1 call Math.exp per lane), so a cold run and a warm run of the same graph
 * differ in the last bit, which breaks the determinism mode (same inputs, same machine,
 * bit-identical outputs). IEEE adds and multiplies are the same in every tier, and the scalar
 * form makes the vector and scalar paths ({@code lantern.cpu.vector=false}) bit-identical too.
 *
 * <p>NOTE (2026-12-02, tried and reverted): clamping with {@code max}/{@code min} against broadcast
 * vectors instead of {@code max(float)}/{@code min(float)}. A standalone micro-benchmark had put the
 * scalar forms at 2 ns per element against 0.5; through {@code UnaryFn.apply} and the GEMM's GELU
 * epilogue both forms measured the same (EXP 0.55 ns, GELU 0.71-0.75 ns per element, one core), so
 * the gap was the micro-benchmark's own compilation. What does cost: GELU of large inputs (|x| above
 * about 10, e.g. pre-activations of standard deviation 16) runs 1.5-2.5× slower per element than of
 * N(0, 1) inputs, plausibly the subnormal p·2⁻¹²⁶ formed for clamped arguments before the final blend.
 */
final class VMath {
    private VMath() {}

    private static final float LOG2E = 1.44269504088896341f;
    private static final float C1 = 0.693359375f;      // ln 2, high part (exact in few bits)
    private static final float C2 = -2.12194440e-4f;   // ln 2 − C1
    private static final float MAGIC = 12582912f;      // 1.5·2^23: adding it rounds to an integer
    private static final int MAGIC_BITS = 0x4B400000;
    private static final float HI = 88.3762626647949f; // above: 2^n overflows the exponent
    private static final float LO = -87.3365447504f;   // below: the result is not a normal float
    private static final float P0 = 1.9875691500E-4f;
    private static final float P1 = 1.3981999507E-3f;
    private static final float P2 = 8.3334519073E-3f;
    private static final float P3 = 4.1665795894E-2f;
    private static final float P4 = 1.6666665459E-1f;
    private static final float P5 = 5.0000001201E-1f;
    private static final float T0 = -5.70498872745E-3f;
    private static final float T1 = 2.06390887954E-2f;
    private static final float T2 = -5.37397155531E-2f;
    private static final float T3 = 1.33314422036E-1f;
    private static final float T4 = -3.33332819422E-1f;

    /** e^x: x = n·ln2 + r, |r| ≤ ln2/2, e^r by a degree-7 polynomial, 2^n into the exponent bits. */
    static FloatVector exp(FloatVector x) {
        FloatVector c = x.max(LO).min(HI);
        FloatVector t = c.mul(LOG2E).add(MAGIC);
        FloatVector n = t.sub(MAGIC);
        FloatVector r = c.sub(n.mul(C1)).sub(n.mul(C2));
        FloatVector rr = r.mul(r);
        FloatVector p = r.mul(P0).add(P1).mul(r).add(P2).mul(r).add(P3).mul(r).add(P4).mul(r).add(P5).mul(rr).add(r).add(1f);
        IntVector e = t.reinterpretAsInts().sub(MAGIC_BITS - 127).lanewise(VectorOperators.LSHL, 23);
        FloatVector y = p.mul(e.reinterpretAsFloats());
        y = y.blend(Float.POSITIVE_INFINITY, x.compare(VectorOperators.GT, 88.7228391f));
        return y.blend(0f, x.compare(VectorOperators.LT, -103.972084f)); // below: e^x < the smallest subnormal
    }

    static float exp(float x) {
        float c = Math.min(Math.max(x, LO), HI);
        float t = c * LOG2E + MAGIC;
        float n = t - MAGIC;
        float r = c - n * C1 - n * C2;
        float rr = r * r;
        float p = (((((r * P0 + P1) * r + P2) * r + P3) * r + P4) * r + P5) * rr + r + 1f;
        float y = p * Float.intBitsToFloat((Float.floatToRawIntBits(t) - (MAGIC_BITS - 127)) << 23);
        if (x > 88.7228391f) {
            return Float.POSITIVE_INFINITY;
        }
        return x < -103.972084f ? 0f : y;
    }

    /** tanh: an odd polynomial below |x| = 0.625, else 1 − 2/(e^(2|x|) + 1) with x's sign. */
    static FloatVector tanh(FloatVector x) {
        FloatVector ax = x.abs();
        FloatVector z = x.mul(x);
        FloatVector small = z.mul(T0).add(T1).mul(z).add(T2).mul(z).add(T3).mul(z).add(T4).mul(z).mul(x).add(x);
        FloatVector big = FloatVector.broadcast(F, 1f).sub(FloatVector.broadcast(F, 2f).div(exp(ax.mul(2f)).add(1f)));
        big = big.blend(big.neg(), x.lt(0f));
        return big.blend(small, ax.lt(0.625f));
    }

    static float tanh(float x) {
        float ax = Math.abs(x);
        if (ax < 0.625f) {
            float z = x * x;
            return ((((z * T0 + T1) * z + T2) * z + T3) * z + T4) * z * x + x;
        }
        float big = 1f - 2f / (exp(ax * 2f) + 1f);
        return x < 0 ? -big : big;
    }
}
