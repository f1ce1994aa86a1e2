package dev.lantern.cpu;

import jdk.incubator.vector.FloatVector;

import static dev.lantern.cpu.CpuConfig.F;

/**
 * The register-tiled micro-kernel: an MR × NR tile of C (6 rows × 2 vectors = 12 accumulators,
 * 6×16 on AVX2) updated by kc rank-1 steps from packed panels:
 * ap holds A's MR rows interleaved (ap[p·MR + r] = A[r, p]), bp holds B's NR columns row by row
 * (bp[p·NR + c] = B[p, c]). Per step: 2 vector loads of B, 6 broadcasts of A, 12 FMAs.
 * C is a padded f32 tile buffer (row stride ldc), loaded first when {@code accumulate}.
 */
final class GemmKernel {
    private GemmKernel() {}

    static final int MR = 6;
    /** Two vectors of the preferred species (16 on AVX2); 16 when vectorisation is off. */
    static final int NR = CpuConfig.VECTOR ? 2 * F.length() : 16;

    static void run(float[] ap, int ao, float[] bp, int bo, int kc, float[] c, int co, int ldc, boolean accumulate) {
        if (CpuConfig.VECTOR) {
            vector(ap, ao, bp, bo, kc, c, co, ldc, accumulate);
        } else {
            scalar(ap, ao, bp, bo, kc, c, co, ldc, accumulate);
        }
    }

    private static void vector(float[] ap, int ao, float[] bp, int bo, int kc, float[] c, int co, int ldc, boolean accumulate) {
        final int w = F.length();
        FloatVector c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
        if (accumulate) {
            c00 = FloatVector.fromArray(F, c, co);
            c01 = FloatVector.fromArray(F, c, co + w);
            c10 = FloatVector.fromArray(F, c, co + ldc);
            c11 = FloatVector.fromArray(F, c, co + ldc + w);
            c20 = FloatVector.fromArray(F, c, co + 2 * ldc);
            c21 = FloatVector.fromArray(F, c, co + 2 * ldc + w);
            c30 = FloatVector.fromArray(F, c, co + 3 * ldc);
            c31 = FloatVector.fromArray(F, c, co + 3 * ldc + w);
            c40 = FloatVector.fromArray(F, c, co + 4 * ldc);
            c41 = FloatVector.fromArray(F, c, co + 4 * ldc + w);
            c50 = FloatVector.fromArray(F, c, co + 5 * ldc);
            c51 = FloatVector.fromArray(F, c, co + 5 * ldc + w);
        } else {
            c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = c40 = c41 = c50 = c51 = FloatVector.zero(F);
        }
        for (int p = 0; p < kc; p++) {
            FloatVector b0 = FloatVector.fromArray(F, bp, bo);
            FloatVector b1 = FloatVector.fromArray(F, bp, bo + w);
            FloatVector a = FloatVector.broadcast(F, ap[ao]);
            c00 = a.fma(b0, c00);
            c01 = a.fma(b1, c01);
            a = FloatVector.broadcast(F, ap[ao + 1]);
            c10 = a.fma(b0, c10);
            c11 = a.fma(b1, c11);
            a = FloatVector.broadcast(F, ap[ao + 2]);
            c20 = a.fma(b0, c20);
            c21 = a.fma(b1, c21);
            a = FloatVector.broadcast(F, ap[ao + 3]);
            c30 = a.fma(b0, c30);
            c31 = a.fma(b1, c31);
            a = FloatVector.broadcast(F, ap[ao + 4]);
            c40 = a.fma(b0, c40);
            c41 = a.fma(b1, c41);
            a = FloatVector.broadcast(F, ap[ao + 5]);
            c50 = a.fma(b0, c50);
            c51 = a.fma(b1, c51);
            ao += MR;
            bo += 2 * w;
        }
        c00.intoArray(c, co);
        c01.intoArray(c, co + w);
        c10.intoArray(c, co + ldc);
        c11.intoArray(c, co + ldc + w);
        c20.intoArray(c, co + 2 * ldc);
        c21.intoArray(c, co + 2 * ldc + w);
        c30.intoArray(c, co + 3 * ldc);
        c31.intoArray(c, co + 3 * ldc + w);
        c40.intoArray(c, co + 4 * ldc);
        c41.intoArray(c, co + 4 * ldc + w);
        c50.intoArray(c, co + 5 * ldc);
        c51.intoArray(c, co + 5 * ldc + w);
    }

    private static void scalar(float[] ap, int ao, float[] bp, int bo, int kc, float[] c, int co, int ldc, boolean accumulate) {
        float[] acc = new float[MR * NR];
        if (accumulate) {
            for (int r = 0; r < MR; r++) {
                System.arraycopy(c, co + r * ldc, acc, r * NR, NR);
            }
        }
        for (int p = 0; p < kc; p++) {
            for (int r = 0; r < MR; r++) {
                float a = ap[ao + p * MR + r];
                for (int j = 0; j < NR; j++) {
                    acc[r * NR + j] = Math.fma(a, bp[bo + p * NR + j], acc[r * NR + j]);
                }
            }
        }
        for (int r = 0; r < MR; r++) {
            System.arraycopy(acc, r * NR, c, co + r * ldc, NR);
        }
    }
}
