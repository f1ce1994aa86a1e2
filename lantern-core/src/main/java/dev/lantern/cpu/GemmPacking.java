package dev.lantern.cpu;

import dev.lantern.ir.DType;
import jdk.incubator.vector.FloatVector;

import java.nio.ByteOrder;

import static dev.lantern.cpu.CpuConfig.F;
import static dev.lantern.cpu.GemmKernel.MR;
import static dev.lantern.cpu.GemmKernel.NR;

/**
 * Copies operand blocks into the micro-kernel's panel order, converting to f32 on the way (so
 * bf16/f16 storage costs one conversion per element per block, not per FMA) and zero-padding the
 * ragged edges (so the micro-kernel never needs a tail).
 */
final class GemmPacking {
    private GemmPacking() {}

    /**
     * A rows [i0, i0+MR), cols [k0, k0+kc) into ap[base ..] as one (kc × MR) panel:
     * ap[base + p·MR + r] = A[i0 + r, k0 + p]; rows past m are zero.
     */
    static void packA(Gemm.Matrix a, long aOff, int i0, int m, int k0, int kc, float[] ap, int base, float[] row) {
        for (int r = 0; r < MR; r++) {
            int i = i0 + r;
            if (i < m) {
                long off = aOff + a.offset() + i * a.rowStride() + k0 * a.colStride();
                Convert.load(a.segment(), a.dtype(), off, a.colStride(), row, 0, kc);
                for (int p = 0; p < kc; p++) {
                    ap[base + p * MR + r] = row[p];
                }
            } else {
                for (int p = 0; p < kc; p++) {
                    ap[base + p * MR + r] = 0f;
                }
            }
        }
    }

    /**
     * B rows [k0, k0+kc), cols [j0, j0+NR) into bp[bo ..] as one (kc × NR) panel:
     * bp[bo + p·NR + c] = B[k0 + p, j0 + c]; columns past n are zero. Reads along whichever axis
     * of B is contiguous (rows for a plain B, columns for a transposed one).
     */
    static void packB(Gemm.Matrix b, long bOff, int k0, int kc, int j0, int n, float[] bp, int bo, float[] col) {
        int nc = Math.min(NR, n - j0);
        long base = bOff + b.offset() + k0 * b.rowStride() + j0 * b.colStride();
        if (CpuConfig.VECTOR && nc == NR && b.colStride() == 1 && b.dtype() == DType.F32 && NR == 2 * F.length()) {
            // the common case, a row-major f32 weight: two vector loads per k, no per-row copy call
            long vb = F.length() * 4L;
            for (int p = 0; p < kc; p++) {
                long byteOff = (base + p * b.rowStride()) * 4;
                FloatVector.fromMemorySegment(F, b.segment(), byteOff, ByteOrder.LITTLE_ENDIAN).intoArray(bp, bo + p * NR);
                FloatVector.fromMemorySegment(F, b.segment(), byteOff + vb, ByteOrder.LITTLE_ENDIAN).intoArray(bp, bo + p * NR + F.length());
            }
        } else if (Math.abs(b.colStride()) <= Math.abs(b.rowStride())) {
            for (int p = 0; p < kc; p++) {
                Convert.load(b.segment(), b.dtype(), base + p * b.rowStride(), b.colStride(), bp, bo + p * NR, nc);
                for (int c = nc; c < NR; c++) {
                    bp[bo + p * NR + c] = 0f;
                }
            }
        } else {
            for (int c = 0; c < NR; c++) {
                if (c < nc) {
                    Convert.load(b.segment(), b.dtype(), base + c * b.colStride(), b.rowStride(), col, 0, kc);
                    for (int p = 0; p < kc; p++) {
                        bp[bo + p * NR + c] = col[p];
                    }
                } else {
                    for (int p = 0; p < kc; p++) {
                        bp[bo + p * NR + c] = 0f;
                    }
                }
            }
        }
    }
}
