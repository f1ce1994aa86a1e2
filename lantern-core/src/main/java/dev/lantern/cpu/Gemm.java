package dev.lantern.cpu;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

import static dev.lantern.cpu.GemmKernel.MR;
import static dev.lantern.cpu.GemmKernel.NR;

/**
 * Batched GEMM, C = epilogue(op(A)·op(B)), Goto/BLIS style:
 * <ol>
 * <li>B is packed once per distinct batch into (KC × NR) panels (f32, zero-padded), in parallel;
 * <li>tasks are (batch, MC-row block, NC-column block) tiles of C, handed out dynamically; a task
 *     packs its A block (MC × KC) per K block and runs the 6×16 micro-kernel over its panels
 *     into a per-thread f32 tile buffer (the B panel stays in L1, the A block in L2);
 * <li>after the last K block, the epilogue (alpha, bias, activation, residual) runs row by row
 *     over the tile, still in L2, and stores to C in C's dtype.
 * </ol>
 * Transposes and any strided view are just operand strides: packing reads them.
 */
public final class Gemm {
    private Gemm() {}

    static final int KC = 256;
    static final int MC = 20 * MR;
    static final int NC = 16 * NR;

    /** A matrix operand: element (i, j) at element index {@code offset + i·rowStride + j·colStride}. */
    public record Matrix(MemorySegment segment, DType dtype, long offset, long rowStride, long colStride) {
        /** A row-major (rows × cols) matrix at {@code offset}. */
        public static Matrix rowMajor(MemorySegment s, DType t, long offset, int cols) {
            return new Matrix(s, t, offset, cols, 1);
        }

        /** This operand transposed (strides swapped). */
        public Matrix t() {
            return new Matrix(segment, dtype, offset, colStride, rowStride);
        }
    }

    /**
     * C (M × N) = epilogue(A (M × K) · B (K × N)) for one matrix product. A residual in the
     * epilogue must be an (M, N) view.
     */
    public static void run(Matrix a, Matrix b, Matrix c, int m, int n, int k, GemmEpilogue ep) {
        Matrix res = ep.residual() == null ? null : matrixOf(ep.residual());
        core(1, a, new long[1], b, new long[1], c, new long[1], res, new long[1], m, n, k, ep);
    }

    /**
     * The IR's matmul: a (..., M, K) [(..., K, M) when transA], b (..., K, N) [(..., N, K) when
     * transB], c (batch..., M, N) with NumPy-broadcast batch dims. When B is shared by every batch
     * and the batch rows of A and C are evenly strided, the batches fold into M (one big GEMM).
     */
    public static void matmul(View a, View b, View c, boolean transA, boolean transB, GemmEpilogue ep) {
        if (transA) {
            a = a.permute(swapLast(a.rank()));
        }
        if (transB) {
            b = b.permute(swapLast(b.rank()));
        }
        int m = a.shape().dim(-2);
        int k = a.shape().dim(-1);
        int n = b.shape().dim(-1);
        if (b.shape().dim(-2) != k || c.shape().dim(-2) != m || c.shape().dim(-1) != n) {
            throw new IllegalArgumentException("matmul shapes do not match: " + a + " x " + b + " -> " + c);
        }
        int rank = c.rank();
        int[] batchDims = Arrays.copyOf(c.shape().dims(), rank - 2);
        View ab = a.broadcastTo(withLast2(batchDims, m, k));
        View bb = b.broadcastTo(withLast2(batchDims, k, n));
        View rb = ep.residual() == null ? null : ep.residual().broadcastTo(c.shape());
        int batches = (int) Shape.of(batchDims).numel();
        boolean bShared = Arrays.stream(Arrays.copyOf(bb.strides(), rank - 2)).allMatch(s -> s == 0);
        if (batches > 1 && bShared && rowsFold(ab) && rowsFold(c) && (rb == null || rowsFold(rb))) {
            Matrix am = new Matrix(ab.segment(), ab.dtype(), ab.offset(), ab.strides()[rank - 2], ab.strides()[rank - 1]);
            Matrix res = rb == null ? null : matrixOf2(rb);
            core(1, am, new long[1], matrixOf2(bb), new long[1], matrixOf2(c), new long[1], res, new long[1], batches * m, n, k, ep);
            return;
        }
        long[] ao = new long[batches];
        long[] bo = new long[batches];
        long[] co = new long[batches];
        long[] ro = new long[batches];
        int[] idx = new int[rank - 2];
        for (int t = 0; t < batches; t++) {
            for (int d = 0; d < idx.length; d++) {
                ao[t] += idx[d] * ab.strides()[d];
                bo[t] += idx[d] * bb.strides()[d];
                co[t] += idx[d] * c.strides()[d];
                ro[t] += rb == null ? 0 : idx[d] * rb.strides()[d];
            }
            for (int d = idx.length - 1; d >= 0 && ++idx[d] == batchDims[d]; d--) {
                idx[d] = 0;
            }
        }
        core(batches, matrixOf2(ab), ao, matrixOf2(bb), bo, matrixOf2(c), co, rb == null ? null : matrixOf2(rb), ro, m, n, k, ep);
    }

    private static final ThreadLocal<float[][]> SCRATCH = new ThreadLocal<>();

    /** Per-thread buffers: [0] packed A (MC × KC), [1] C tile (MC × NC), [2..4] rows of KC/NC. */
    private static float[][] scratch() {
        float[][] s = SCRATCH.get();
        if (s == null) {
            int rowLen = Math.max(KC, NC);
            s = new float[][] {new float[MC * KC], new float[MC * NC], new float[rowLen], new float[rowLen], new float[rowLen]};
            SCRATCH.set(s);
        }
        return s;
    }

    static void core(int batches, Matrix a, long[] aOff, Matrix b, long[] bOff, Matrix c, long[] cOff,
                     Matrix res, long[] rOff, int m, int n, int k, GemmEpilogue ep) {
        if (m == 0 || n == 0) {
            return;
        }
        int nPad = (n + NR - 1) / NR * NR;
        int kBlocks = (k + KC - 1) / KC;
        int nPanels = nPad / NR;
        // 1. pack B once per distinct batch offset (broadcast batches share one packing)
        Map<Long, Integer> distinct = new HashMap<>();
        int[] packIndex = new int[batches];
        for (int t = 0; t < batches; t++) {
            packIndex[t] = distinct.computeIfAbsent(bOff[t], x -> distinct.size());
        }
        long[] packOff = new long[distinct.size()];
        distinct.forEach((off, i) -> packOff[i] = off);
        float[][] packed = new float[packOff.length][Math.multiplyExact(k, nPad)];
        int panelGroups = (nPanels + 7) / 8;
        Parallel.forEach(packOff.length * kBlocks * panelGroups, task -> {
            int g = task % panelGroups;
            int kb = task / panelGroups % kBlocks;
            int pi = task / panelGroups / kBlocks;
            int k0 = kb * KC;
            int kc = Math.min(KC, k - k0);
            float[] col = scratch()[2];
            for (int jp = g * 8; jp < Math.min(nPanels, g * 8 + 8); jp++) {
                GemmPacking.packB(b, packOff[pi], k0, kc, jp * NR, n, packed[pi], k0 * nPad + jp * kc * NR, col);
            }
        });
        // 2. tiles of C
        float[] biasF = Rows.vector(ep.bias());
        int mTiles = (m + MC - 1) / MC;
        int nTiles = (n + NC - 1) / NC;
        Parallel.forEach(batches * mTiles * nTiles, task -> {
            int nt = task % nTiles;
            int mt = task / nTiles % mTiles;
            int t = task / nTiles / mTiles;
            tile(a, aOff[t], packed[packIndex[t]], nPad, c, cOff[t], res, rOff[t], biasF, ep,
                    mt * MC, Math.min(MC, m - mt * MC), nt * NC, Math.min(NC, n - nt * NC), k);
        });
    }

    private static void tile(Matrix a, long aOff, float[] bp, int nPad, Matrix c, long cOff, Matrix res, long rOff,
                             float[] biasF, GemmEpilogue ep, int i0, int mc, int j0, int nc, int k) {
        float[][] s = scratch();
        float[] ap = s[0];
        float[] cbuf = s[1];
        int mPanels = (mc + MR - 1) / MR;
        int nPanels = (nc + NR - 1) / NR;
        if (k == 0) {
            Arrays.fill(cbuf, 0f);
        }
        for (int k0 = 0; k0 < k; k0 += KC) {
            int kc = Math.min(KC, k - k0);
            GemmPacking.packA(a, aOff, i0, mc, k0, kc, ap, s[2]);
            for (int jr = 0; jr < nPanels; jr++) {
                int bo = k0 * nPad + (j0 / NR + jr) * kc * NR;
                for (int ir = 0; ir < mPanels; ir++) {
                    GemmKernel.run(ap, ir * kc * MR, bp, bo, kc, cbuf, ir * MR * NC + jr * NR, NC, k0 > 0);
                }
            }
        }
        // epilogue, row by row over the hot tile
        float[] resRow = res == null ? null : s[3];
        float[] outRow = s[4];
        for (int i = 0; i < mc; i++) {
            if (res != null) {
                Convert.load(res.segment(), res.dtype(), rOff + res.offset() + (i0 + i) * res.rowStride() + j0 * res.colStride(), res.colStride(), resRow, 0, nc);
            }
            long cRow = cOff + c.offset() + (i0 + i) * c.rowStride() + j0 * c.colStride();
            if (ep.isIdentity()) {
                Convert.store(cbuf, i * NC, c.segment(), c.dtype(), cRow, c.colStride(), nc);
            } else {
                ep.apply(cbuf, i * NC, nc, biasF, j0, resRow, outRow);
                Convert.store(outRow, 0, c.segment(), c.dtype(), cRow, c.colStride(), nc);
            }
        }
    }

    /** Whether axes 0 .. rank−2 of v nest evenly, so that all its batch rows form one strided row axis. */
    private static boolean rowsFold(View v) {
        int r = v.rank();
        for (int d = r - 3; d >= 0; d--) {
            if (v.strides()[d] != v.strides()[d + 1] * v.shape().dim(d + 1)) {
                return false;
            }
        }
        return true;
    }

    /** The last two axes of v as a matrix (rows, cols). */
    private static Matrix matrixOf2(View v) {
        int r = v.rank();
        return new Matrix(v.segment(), v.dtype(), v.offset(), v.strides()[r - 2], v.strides()[r - 1]);
    }

    private static Matrix matrixOf(View v) {
        if (v.rank() != 2) {
            throw new IllegalArgumentException("expected an (M, N) residual, found " + v);
        }
        return matrixOf2(v);
    }

    private static int[] swapLast(int rank) {
        int[] p = new int[rank];
        for (int i = 0; i < rank; i++) {
            p[i] = i;
        }
        p[rank - 2] = rank - 1;
        p[rank - 1] = rank - 2;
        return p;
    }

    private static Shape withLast2(int[] batch, int r, int c) {
        int[] d = Arrays.copyOf(batch, batch.length + 2);
        d[batch.length] = r;
        d[batch.length + 1] = c;
        return Shape.of(d);
    }
}
