package dev.lantern.cpu;

import dev.lantern.ir.DType;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

import static dev.lantern.cpu.GemmKernel.MR;
import static dev.lantern.cpu.GemmKernel.NR;

/**
 * Copies operand blocks into the micro-kernel's panel order, converting to f32 on the way (so
 * bf16/f16 storage costs one conversion per element per block, not per FMA) and zero-padding the
 * ragged edges (so the micro-kernel never needs a tail). A B panel is built in a heap array and
 * copied into the native packing buffer in one call (no Vector API on heap memory: see
 * {@link GemmKernel}'s note); A goes into MR-row panels of a heap array ({@link GemmKernel#PACKED_A}).
 */
final class GemmPacking {
    private GemmPacking() {}

    /**
     * A rows [i0, i0+rows) (i0 a multiple of MR) into the heap array ap, converted to f32, all k columns;
     * rows past m are zero. Row r at {@code base + r·lda} (the micro-kernel reads rows in place), or
     * with {@link GemmKernel#PACKED_A} in MR-row panels: A[i0 + r, p] at
     * {@code base + (r / MR)·MR·lda + MR·p + r % MR} (the same footprint).
     */
    static void copyA(Gemm.Matrix a, long aOff, int i0, int rows, int m, int k, float[] ap, int base, int lda) {
        if (GemmKernel.PACKED_A) {
            packA(a, aOff, i0, rows, m, k, ap, base, lda);
            return;
        }
        for (int r = 0; r < rows; r++) {
            int i = i0 + r;
            if (i < m) {
                Convert.load(a.segment(), a.dtype(), aOff + a.offset() + i * a.rowStride(), a.colStride(), ap, base + r * lda, k);
            } else {
                java.util.Arrays.fill(ap, base + r * lda, base + r * lda + k, 0f);
            }
        }
    }

    /**
     * {@link #copyA} into MR-row panels: the panel's MR rows are loaded (converted) side by side into
     * a scratch row block, then interleaved along p, so that the panel is written in order (a row at
     * a time with stride MR wrote each cache line MR times: packing was 10 % of a 256 × 1024 × 256 GEMM).
     */
    private static void packA(Gemm.Matrix a, long aOff, int i0, int rows, int m, int k, float[] ap, int base, int lda) {
        float[] block = row(MR * k);
        boolean direct = PanelTranspose.AVAILABLE && a.dtype() == DType.F32 && a.colStride() == 1;
        for (int r0 = 0; r0 < rows; r0 += MR) {
            if (direct && i0 + r0 + MR <= m) {
                // eight whole f32 rows, contiguous: transposed straight from the tensor
                PanelTranspose.fromRows(a.segment(), 4 * (aOff + a.offset() + (i0 + r0) * a.rowStride()), 4 * a.rowStride(), k, ap, base + r0 * lda);
                continue;
            }
            for (int r = 0; r < MR; r++) {
                int i = i0 + r0 + r;
                if (i < m) {
                    Convert.load(a.segment(), a.dtype(), aOff + a.offset() + i * a.rowStride(), a.colStride(), block, r * k, k);
                } else {
                    java.util.Arrays.fill(block, r * k, (r + 1) * k, 0f);
                }
            }
            interleave(block, 0, k, k, ap, base + r0 * lda);
        }
    }

    /**
     * MR rows of {@code src} (row r at {@code off + r·ld}, columns [0, cols)) as one packed A panel at
     * {@code dst[at]}: {@code dst[at + p·MR + r] = src[off + r·ld + p]}, written in order; returns {@code dst}.
     */
    static float[] interleave(float[] src, int off, int ld, int cols, float[] dst, int at) {
        if (PanelTranspose.AVAILABLE) {
            PanelTranspose.fromRows(src, off, ld, cols, dst, at);
            return dst;
        }
        if (GATHER != null) {
            // one gather of the MR rows' column p a step: the scalar loop below ran ~10 cycles an element
            // (packing A was 11-12 % of a 256 x 256 x 256 or 256 x 1024 x 256 GEMM)
            int[] rows = gatherRows(ld);
            for (int p = 0, q = at; p < cols; p++, q += MR) {
                FloatVector.fromArray(GATHER, src, off + p, rows, 0).intoArray(dst, q);
            }
            return dst;
        }
        for (int p = 0, q = at; p < cols; p++, q += MR) {
            for (int r = 0; r < MR; r++) {
                dst[q + r] = src[off + r * ld + p];
            }
        }
        return dst;
    }

    /** MR lanes (256 bits for MR = 8, 128 for MR = 4): one gathered column of a panel; null without vectors. */
    private static final VectorSpecies<Float> GATHER = CpuConfig.VECTOR && (MR == 8 || MR == 4)
            ? (MR == 8 ? FloatVector.SPECIES_256 : FloatVector.SPECIES_128) : null;

    /** Per thread: the gather offsets of the last stride, that stride in the spare slot (-1: none yet). */
    private static final ThreadLocal<int[]> GATHER_ROWS = ThreadLocal.withInitial(() -> {
        int[] none = new int[MR + 1];
        none[MR] = -1;
        return none;
    });

    /** The calling thread's gather offsets {0, ld, ..., (MR-1)·ld}. */
    private static int[] gatherRows(int ld) {
        int[] rows = GATHER_ROWS.get();
        if (rows[MR] != ld) {
            rows = new int[MR + 1];
            for (int r = 0; r < MR; r++) {
                rows[r] = r * ld;
            }
            rows[MR] = ld;
            GATHER_ROWS.set(rows);
        }
        return rows;
    }

    private static final ThreadLocal<float[]> ROW = ThreadLocal.withInitial(() -> new float[0]);

    /** The calling thread's row of at least k floats, grown on demand. */
    private static float[] row(int k) {
        float[] r = ROW.get();
        if (r.length < k) {
            r = new float[k];
            ROW.set(r);
        }
        return r;
    }

    /**
     * B rows [k0, k0+kc), cols [j0, j0+NR) into bp[bo ..] as one (kc × NR) panel:
     * bp[bo + p·NR + c] = B[k0 + p, j0 + c]; columns past n are zero. Reads along whichever axis
     * of B is contiguous (rows for a plain B, columns for a transposed one).
     */
    static void packB(Gemm.Matrix b, long bOff, int k0, int kc, int j0, int n, MemorySegment bp, long bo, float[] col, float[] panel) {
        int nc = Math.min(NR, n - j0);
        long base = bOff + b.offset() + k0 * b.rowStride() + j0 * b.colStride();
        if (Math.abs(b.colStride()) <= Math.abs(b.rowStride())) {
            for (int p = 0; p < kc; p++) {
                Convert.load(b.segment(), b.dtype(), base + p * b.rowStride(), b.colStride(), panel, p * NR, nc);
                for (int c = nc; c < NR; c++) {
                    panel[p * NR + c] = 0f;
                }
            }
        } else {
            for (int c = 0; c < NR; c++) {
                if (c < nc) {
                    Convert.load(b.segment(), b.dtype(), base + c * b.colStride(), b.rowStride(), col, 0, kc);
                    for (int p = 0; p < kc; p++) {
                        panel[p * NR + c] = col[p];
                    }
                } else {
                    for (int p = 0; p < kc; p++) {
                        panel[p * NR + c] = 0f;
                    }
                }
            }
        }
        MemorySegment.copy(panel, 0, bp, Convert.F32, bo * 4, kc * NR);
    }
}
