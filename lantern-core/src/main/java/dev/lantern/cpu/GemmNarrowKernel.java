package dev.lantern.cpu;

import jdk.incubator.vector.FloatVector;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;

import static dev.lantern.cpu.CpuConfig.F;
import static dev.lantern.cpu.GemmKernel.NR;

/**
 * The micro-kernel for an A panel of 1 to 4 real rows (decode, M = 1..16, and the ragged last rows
 * of any M): rows × two B panels (4 vectors) instead of {@link GemmKernel}'s 8 × one panel, so that
 * a single row no longer pays for eight (GEMV-style: M = 1 ran 8× the FMAs, all but one on padding).
 * Two panels give a lone row 4 independent accumulators, enough to hide most of the FMA latency.
 *
 * <p>Same panels and the same FMA order per element as {@link GemmKernel} (c = fma(a, b, c) over
 * p in order): results are bit-identical whichever kernel computes a row, so the M split, and
 * with it the thread count, changes no bit.
 */
final class GemmNarrowKernel {
    private GemmNarrowKernel() {}

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    /**
     * 4 with 32 vector registers; 2 with AVX2's 16, where 3 or 4 rows × 4 accumulators, 4 B vectors
     * and the broadcasts do not fit (the 4-row full kernel takes 3 rows instead).
     */
    private static final int MAX_ROWS = F.length() <= 8 ? 2 : 4;

    /** A's step along p: 1 for rows read in place, MR in a packed panel ({@link GemmKernel#PACKED_A}). */
    private static final int PS = GemmKernel.PACKED_A ? GemmKernel.MR : 1;

    /** Whether {@code rows} real rows of an A panel go here (vector path only). */
    static boolean takes(int rows) {
        return CpuConfig.VECTOR && rows >= 1 && rows <= MAX_ROWS;
    }

    /**
     * C[r, 0 .. 2·NR) for r < rows from A's rows at ao + r·lda of the heap array a (Gemm's packed
     * panel, A[r, p] at ao + MR·p + r, with {@link GemmKernel#PACKED_A}) and the two
     * consecutive B panels at element bo and bo + kc·NR; C rows at co + r·ldc.
     */
    static void run(int rows, float[] a, int ao, int lda, MemorySegment bp, long bo, int kc, float[] c, int co, int ldc, boolean accumulate) {
        final int w = F.length();
        // A[r, p] at ao + r·rs + PS·p: rows in place, or Gemm's packed panel (GemmKernel.PACKED_A)
        final int rs = GemmKernel.PACKED_A ? 1 : lda;
        final int a1 = ao + rs, a2 = a1 + rs, a3 = a2 + rs;
        final long b0 = bo * 4L;
        final long b1 = (bo + (long) kc * NR) * 4L;
        final long vb = w * 4L;
        FloatVector c00 = FloatVector.zero(F), c01 = c00, c02 = c00, c03 = c00;
        FloatVector c10 = c00, c11 = c00, c12 = c00, c13 = c00;
        FloatVector c20 = c00, c21 = c00, c22 = c00, c23 = c00;
        FloatVector c30 = c00, c31 = c00, c32 = c00, c33 = c00;
        if (accumulate) {
            c00 = FloatVector.fromArray(F, c, co);
            c01 = FloatVector.fromArray(F, c, co + w);
            c02 = FloatVector.fromArray(F, c, co + NR);
            c03 = FloatVector.fromArray(F, c, co + NR + w);
            if (rows > 1) {
                c10 = FloatVector.fromArray(F, c, co + ldc);
                c11 = FloatVector.fromArray(F, c, co + ldc + w);
                c12 = FloatVector.fromArray(F, c, co + ldc + NR);
                c13 = FloatVector.fromArray(F, c, co + ldc + NR + w);
            }
            if (rows > 2) {
                c20 = FloatVector.fromArray(F, c, co + 2 * ldc);
                c21 = FloatVector.fromArray(F, c, co + 2 * ldc + w);
                c22 = FloatVector.fromArray(F, c, co + 2 * ldc + NR);
                c23 = FloatVector.fromArray(F, c, co + 2 * ldc + NR + w);
            }
            if (rows > 3) {
                c30 = FloatVector.fromArray(F, c, co + 3 * ldc);
                c31 = FloatVector.fromArray(F, c, co + 3 * ldc + w);
                c32 = FloatVector.fromArray(F, c, co + 3 * ldc + NR);
                c33 = FloatVector.fromArray(F, c, co + 3 * ldc + NR + w);
            }
        }
        final long step = NR * 4L;
        if (rows == 1) {
            for (int p = 0; p < kc; p++) {
                long pb = p * step;
                FloatVector x = FloatVector.broadcast(F, a[ao + PS * p]);
                c00 = x.fma(FloatVector.fromMemorySegment(F, bp, b0 + pb, LE), c00);
                c01 = x.fma(FloatVector.fromMemorySegment(F, bp, b0 + pb + vb, LE), c01);
                c02 = x.fma(FloatVector.fromMemorySegment(F, bp, b1 + pb, LE), c02);
                c03 = x.fma(FloatVector.fromMemorySegment(F, bp, b1 + pb + vb, LE), c03);
            }
        } else if (rows == 2) {
            for (int p = 0; p < kc; p++) {
                long pb = p * step;
                FloatVector y0 = FloatVector.fromMemorySegment(F, bp, b0 + pb, LE);
                FloatVector y1 = FloatVector.fromMemorySegment(F, bp, b0 + pb + vb, LE);
                FloatVector y2 = FloatVector.fromMemorySegment(F, bp, b1 + pb, LE);
                FloatVector y3 = FloatVector.fromMemorySegment(F, bp, b1 + pb + vb, LE);
                FloatVector x = FloatVector.broadcast(F, a[ao + PS * p]);
                c00 = x.fma(y0, c00);
                c01 = x.fma(y1, c01);
                c02 = x.fma(y2, c02);
                c03 = x.fma(y3, c03);
                x = FloatVector.broadcast(F, a[a1 + PS * p]);
                c10 = x.fma(y0, c10);
                c11 = x.fma(y1, c11);
                c12 = x.fma(y2, c12);
                c13 = x.fma(y3, c13);
            }
        } else if (rows == 3) {
            for (int p = 0; p < kc; p++) {
                long pb = p * step;
                FloatVector y0 = FloatVector.fromMemorySegment(F, bp, b0 + pb, LE);
                FloatVector y1 = FloatVector.fromMemorySegment(F, bp, b0 + pb + vb, LE);
                FloatVector y2 = FloatVector.fromMemorySegment(F, bp, b1 + pb, LE);
                FloatVector y3 = FloatVector.fromMemorySegment(F, bp, b1 + pb + vb, LE);
                FloatVector x = FloatVector.broadcast(F, a[ao + PS * p]);
                c00 = x.fma(y0, c00);
                c01 = x.fma(y1, c01);
                c02 = x.fma(y2, c02);
                c03 = x.fma(y3, c03);
                x = FloatVector.broadcast(F, a[a1 + PS * p]);
                c10 = x.fma(y0, c10);
                c11 = x.fma(y1, c11);
                c12 = x.fma(y2, c12);
                c13 = x.fma(y3, c13);
                x = FloatVector.broadcast(F, a[a2 + PS * p]);
                c20 = x.fma(y0, c20);
                c21 = x.fma(y1, c21);
                c22 = x.fma(y2, c22);
                c23 = x.fma(y3, c23);
            }
        } else {
            for (int p = 0; p < kc; p++) {
                long pb = p * step;
                FloatVector y0 = FloatVector.fromMemorySegment(F, bp, b0 + pb, LE);
                FloatVector y1 = FloatVector.fromMemorySegment(F, bp, b0 + pb + vb, LE);
                FloatVector y2 = FloatVector.fromMemorySegment(F, bp, b1 + pb, LE);
                FloatVector y3 = FloatVector.fromMemorySegment(F, bp, b1 + pb + vb, LE);
                FloatVector x = FloatVector.broadcast(F, a[ao + PS * p]);
                c00 = x.fma(y0, c00);
                c01 = x.fma(y1, c01);
                c02 = x.fma(y2, c02);
                c03 = x.fma(y3, c03);
                x = FloatVector.broadcast(F, a[a1 + PS * p]);
                c10 = x.fma(y0, c10);
                c11 = x.fma(y1, c11);
                c12 = x.fma(y2, c12);
                c13 = x.fma(y3, c13);
                x = FloatVector.broadcast(F, a[a2 + PS * p]);
                c20 = x.fma(y0, c20);
                c21 = x.fma(y1, c21);
                c22 = x.fma(y2, c22);
                c23 = x.fma(y3, c23);
                x = FloatVector.broadcast(F, a[a3 + PS * p]);
                c30 = x.fma(y0, c30);
                c31 = x.fma(y1, c31);
                c32 = x.fma(y2, c32);
                c33 = x.fma(y3, c33);
            }
        }
        c00.intoArray(c, co);
        c01.intoArray(c, co + w);
        c02.intoArray(c, co + NR);
        c03.intoArray(c, co + NR + w);
        if (rows > 1) {
            c10.intoArray(c, co + ldc);
            c11.intoArray(c, co + ldc + w);
            c12.intoArray(c, co + ldc + NR);
            c13.intoArray(c, co + ldc + NR + w);
        }
        if (rows > 2) {
            c20.intoArray(c, co + 2 * ldc);
            c21.intoArray(c, co + 2 * ldc + w);
            c22.intoArray(c, co + 2 * ldc + NR);
            c23.intoArray(c, co + 2 * ldc + NR + w);
        }
        if (rows > 3) {
            c30.intoArray(c, co + 3 * ldc);
            c31.intoArray(c, co + 3 * ldc + w);
            c32.intoArray(c, co + 3 * ldc + NR);
            c33.intoArray(c, co + 3 * ldc + NR + w);
        }
    }
}
