package dev.lantern.cpu;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
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
 * <p>The polynomial and the range reduction are fused multiply-adds ({@code Math.fma} in the scalar
 * form, the same IEEE operation lane by lane): 19 vector operations instead of 31, and GELU's epilogue
 * in the MLP up-projection went from about 0.58 to 0.3 ns per element (one core). Arguments below
 * {@code LO} = −87 give 0 (|error| &lt; 1.7e-38): the previous clamp at −87.34 formed the subnormal
 * p·2⁻¹²⁶ before its final blend, and subnormal arithmetic made GELU of inputs above about 10 (its
 * exp argument below −87) 1.5-2.5× slower per element. Above 88.72 the result is +∞ as before.
 *
 * <p>NOTE (2026-12-02, tried and reverted): clamping with {@code max}/{@code min} against broadcast
 * vectors instead of {@code max(float)}/{@code min(float)}: through {@code UnaryFn.apply} and the GEMM's
 * GELU epilogue both forms measured the same.
 */
final class VMath {
    private VMath() {}

    private static final float LOG2E = 1.44269504088896341f;
    private static final float C1 = 0.693359375f;      // ln 2, high part (exact in few bits)
    private static final float C2 = -2.12194440e-4f;   // ln 2 − C1
    private static final float MAGIC = 12582912f;      // 1.5·2^23: adding it rounds to an integer
    private static final int MAGIC_BITS = 0x4B400000;
    private static final float HI = 88.3762626647949f; // above: 2^n overflows the exponent
    /** Below: 0. With c ≥ −87, n ≥ −126 and e^r ≥ 1.4 when n = −126, so p·2ⁿ is always a normal float. */
    private static final float LO = -87f;
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
        // clamp by compare and blend: Java's max/min semantics (NaN, −0) cost C2 about five instructions each
        VectorMask<Float> low = x.lt(LO);
        FloatVector c = x.blend(LO, low).blend(HI, x.compare(VectorOperators.GT, HI));
        FloatVector t = c.fma(LOG2E, MAGIC);
        FloatVector n = t.sub(MAGIC);
        FloatVector r = n.fma(k(-C2), n.fma(k(-C1), c));
        FloatVector p = r.fma(P0, P1).fma(r, k(P2)).fma(r, k(P3)).fma(r, k(P4)).fma(r, k(P5));
        p = p.fma(r.mul(r), r).add(1f);
        IntVector e = t.reinterpretAsInts().sub(MAGIC_BITS - 127).lanewise(VectorOperators.LSHL, 23);
        FloatVector y = p.mul(e.reinterpretAsFloats());
        y = y.blend(Float.POSITIVE_INFINITY, x.compare(VectorOperators.GT, 88.7228391f));
        return y.blend(0f, low);
    }

    /** A constant as a vector (C2 hoists the broadcast out of the caller's loop). */
    private static FloatVector k(float c) {
        return FloatVector.broadcast(F, c);
    }

    static float exp(float x) {
        float c = x < LO ? LO : x > HI ? HI : x; // as the vector form's blends (NaN stays NaN)
        float t = Math.fma(c, LOG2E, MAGIC);
        float n = t - MAGIC;
        float r = Math.fma(n, -C2, Math.fma(n, -C1, c));
        float p = Math.fma(Math.fma(Math.fma(Math.fma(Math.fma(r, P0, P1), r, P2), r, P3), r, P4), r, P5);
        p = Math.fma(p, r * r, r) + 1f;
        float y = p * Float.intBitsToFloat((Float.floatToRawIntBits(t) - (MAGIC_BITS - 127)) << 23);
        if (x > 88.7228391f) {
            return Float.POSITIVE_INFINITY;
        }
        return x < LO ? 0f : y;
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
