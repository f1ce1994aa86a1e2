package dev.lantern.cpu;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

import static dev.lantern.cpu.GemmKernel.MR;
import static dev.lantern.cpu.GemmKernel.NR;

/**
 * Batched GEMM, C = epilogue(op(A)·op(B)), Goto/BLIS style:
 * <ol>
 * <li>A and B are packed once per distinct batch, in parallel: A into a heap array (f32, MR-row
 *     panels, A[r, p] at panel + MR·p + r, rows padded to MR with zeros; without vectors, rows at
 *     stride {@link #lda}); B into (kc × NR) panels per K block (f32, zero-padded); no task packs anything and
 *     packing costs O(MK + KN);
 * <li>tasks are (batch, MC-row block, column block: {@link GemmTiles}) tiles of C, handed out dynamically; per K
 *     block ({@link #kBlock}: all of K up to 3072 with 512-bit vectors, 256 on AVX2) a task runs the MR × NR (8 × 2
 *     vectors, 4 × 2 on AVX2) micro-kernel over its panels into a per-thread f32 tile buffer (with 512-bit vectors
 *     a B panel of K = 768 is 96 KB, in L2 beside the tile's A panels; on AVX2 a 16 KB panel stays in L1),
 *     touching the next panel ahead ({@link GemmTile});
 * <li>after the last K block, the epilogue (alpha, bias, activation, residual) runs row by row
 *     over the tile, still in L2, and stores to C in C's dtype.
 * </ol>
 * Transposes and any strided view are just operand strides: packing reads them.
 */
public final class Gemm {
    private Gemm() {}

    /**
     * The deepest K block: a micro-kernel runs up to KC steps of k before its sums go back to the tile
     * buffer. 3072 with 512-bit vectors, so that no GPT-2-sized K (768, 3072) is split at all: a B panel
     * (KC × NR f32, 32 KB at KC = 256) fills a 32 KB L1 by itself, so blocking K never kept it there,
     * and each further block only reloads the C tile and calls every micro-kernel again. Against 256
     * (with MC 256), one core of an AMD EPYC (Zen 4: 32 KB L1, 1 MB L2), interleaved in one JVM,
     * 2026-12-04: GPT-2 b1 1.03×, b8 1.04×, decoder-small 1.05×, cpu-small 1.02×, f32 1024³ 1.04×;
     * M = 1..64 on packed weights 1.03–1.06× (to 112 GFLOP/s, the FMA units' peak). KC 512 gained
     * less, KC 768 as much on b1 and less on b8 (docs/cpu-backend.md, "Deep K blocks"). 256 on AVX2.
     * A deeper K is split evenly ({@link #kBlock}).
     */
    static final int KC = MR == 8 ? 3072 : 256;

    /**
     * The K block of a GEMM of depth k: k in the fewest blocks of at most {@link #KC}, as even as
     * multiples of 8 allow (K = 4096 is 2 × 2048, not 3072 + 1024). Every K block but the last is
     * this deep; {@link PackedWeight} and the tiles agree on it through this method. At least 8, so
     * that K = 0 is zero blocks rather than a division by zero.
     */
    static int kBlock(int k) {
        int blocks = Math.max(1, (k + KC - 1) / KC);
        int per = (k + blocks - 1) / blocks;
        return Math.min(KC, Math.max(8, (per + 7) / 8 * 8));
    }

    /**
     * Rows of an A block (a multiple of MR); each B panel fetched is reused by MC / MR micro-kernels.
     * 128 with 512-bit vectors, whose K blocks run deep (K = 768: a 384 KB A block and a 256 KB
     * tile buffer in L2): against 256 with KC 3072, one Zen 4 core, 2026-12-04, GPT-2 b1 1.01×, b8
     * 1.01×, f32 1024³ 1.01× and 2048 × 1024 × 4096 1.03×. (With KC 256 an Intel Xeon had gained
     * 1.02–1.08× from 256 over 160 at M = 1024.) 160 on AVX2 (160 KB + 160 KB), whose cores may have
     * 512 KB of L2.
     */
    static final int MC = MR == 8 ? 128 : 160;
    static final int NC = 16 * NR;
    /**
     * How many tiles of C per thread {@link GemmTiles} aims at (with more than one thread): 1, so
     * that a tile's B panels run long and each is touched ahead by the one before ({@link GemmTile}).
     * Against 4, two threads, packed weights, 2026-12-04: 1.00–1.11× (K = 3072 or 4096 at M = 128
     * gained most: 1.07–1.11×; M = 256 1.03–1.06×; M = 1024 and M ≤ 8 1.00×).
     */
    static final long TILES_PER_THREAD = 1;

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
        Matrix res2 = ep.residual2() == null ? null : matrixOf(ep.residual2());
        core(1, a, new long[1], b, new long[1], null, c, new long[1], res, new long[1], res2, new long[1], m, n, k, ep);
    }

    /**
     * The IR's matmul with B a weight packed once ({@link PackedWeight}): a (..., M, K) [(..., K, M)
     * when transA], c (..., M, N). A's batch rows fold into M when they nest evenly (they do for
     * every activation the compiler lays out); otherwise each batch is one product against the same
     * panels. Bit-identical to {@link #matmul} on the unpacked B: the same panels, the same K order.
     */
    public static void matmul(View a, PackedWeight b, View c, boolean transA, GemmEpilogue ep) {
        if (transA) {
            a = a.permute(swapLast(a.rank()));
        }
        int m = a.shape().dim(-2);
        int k = a.shape().dim(-1);
        int n = b.n();
        if (b.k() != k || c.shape().dim(-2) != m || c.shape().dim(-1) != n) {
            throw new IllegalArgumentException("matmul shapes: a " + a.shape() + " · packed (" + b.k() + ", " + n + ") → c " + c.shape());
        }
        int rank = c.rank();
        int[] batchDims = Arrays.copyOf(c.shape().dims(), rank - 2);
        View ab = a.broadcastTo(withLast2(batchDims, m, k));
        View rb = ep.residual() == null ? null : ep.residual().broadcastTo(c.shape());
        View rb2 = ep.residual2() == null ? null : ep.residual2().broadcastTo(c.shape());
        int batches = (int) Shape.of(batchDims).numel();
        if (rowsFold(ab) && rowsFold(c) && (rb == null || rowsFold(rb)) && (rb2 == null || rowsFold(rb2))) {
            Matrix am = new Matrix(ab.segment(), ab.dtype(), ab.offset(), ab.strides()[rank - 2], ab.strides()[rank - 1]);
            core(1, am, new long[1], null, new long[1], b.panels(), matrixOf2(c), new long[1], matrixOrNull(rb), new long[1],
                    matrixOrNull(rb2), new long[1], batches * m, n, k, ep);
            return;
        }
        long[] ao = new long[batches];
        long[] co = new long[batches];
        long[] ro = new long[batches];
        long[] ro2 = new long[batches];
        int[] idx = new int[rank - 2];
        for (int t = 0; t < batches; t++) {
            for (int d = 0; d < idx.length; d++) {
                ao[t] += idx[d] * ab.strides()[d];
                co[t] += idx[d] * c.strides()[d];
                ro[t] += rb == null ? 0 : idx[d] * rb.strides()[d];
                ro2[t] += rb2 == null ? 0 : idx[d] * rb2.strides()[d];
            }
            for (int d = idx.length - 1; d >= 0 && ++idx[d] == batchDims[d]; d--) {
                idx[d] = 0;
            }
        }
        core(batches, matrixOf2(ab), ao, null, new long[batches], b.panels(), matrixOf2(c), co, matrixOrNull(rb), ro,
                matrixOrNull(rb2), ro2, m, n, k, ep);
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
        View rb2 = ep.residual2() == null ? null : ep.residual2().broadcastTo(c.shape());
        int batches = (int) Shape.of(batchDims).numel();
        boolean bShared = Arrays.stream(Arrays.copyOf(bb.strides(), rank - 2)).allMatch(s -> s == 0);
        if (batches > 1 && bShared && rowsFold(ab) && rowsFold(c) && (rb == null || rowsFold(rb)) && (rb2 == null || rowsFold(rb2))) {
            Matrix am = new Matrix(ab.segment(), ab.dtype(), ab.offset(), ab.strides()[rank - 2], ab.strides()[rank - 1]);
            core(1, am, new long[1], matrixOf2(bb), new long[1], null, matrixOf2(c), new long[1], matrixOrNull(rb), new long[1],
                    matrixOrNull(rb2), new long[1], batches * m, n, k, ep);
            return;
        }
        long[] ao = new long[batches];
        long[] bo = new long[batches];
        long[] co = new long[batches];
        long[] ro = new long[batches];
        long[] ro2 = new long[batches];
        int[] idx = new int[rank - 2];
        for (int t = 0; t < batches; t++) {
            for (int d = 0; d < idx.length; d++) {
                ao[t] += idx[d] * ab.strides()[d];
                bo[t] += idx[d] * bb.strides()[d];
                co[t] += idx[d] * c.strides()[d];
                ro[t] += rb == null ? 0 : idx[d] * rb.strides()[d];
                ro2[t] += rb2 == null ? 0 : idx[d] * rb2.strides()[d];
            }
            for (int d = idx.length - 1; d >= 0 && ++idx[d] == batchDims[d]; d--) {
                idx[d] = 0;
            }
        }
        core(batches, matrixOf2(ab), ao, matrixOf2(bb), bo, null, matrixOf2(c), co, matrixOrNull(rb), ro, matrixOrNull(rb2), ro2, m, n, k, ep);
    }

    /**
     * The calling thread's packing buffers, grown on demand and kept (a GEMM of the benchmark's
     * size packs 24 MB; reallocating that per call costs more than the packing itself). Native,
     * like every tensor, so that the micro-kernel only ever sees one kind of segment.
     */
    private static final ThreadLocal<MemorySegment> PACKED_B = ThreadLocal.withInitial(() -> MemorySegment.NULL);

    private static MemorySegment packedB(long elems) {
        MemorySegment p = PACKED_B.get();
        if (p.byteSize() < elems * 4) {
            p = Arena.ofAuto().allocate(Math.max(4, elems * 4), 64);
            PACKED_B.set(p);
        }
        return p;
    }

    /** The calling thread's copy of A (heap: the micro-kernel's scalar A loads, see {@link GemmKernel}), grown on demand. */
    private static final ThreadLocal<float[]> PACKED_A = ThreadLocal.withInitial(() -> new float[0]);

    private static float[] packedA(long elems) {
        float[] p = PACKED_A.get();
        if (p.length < elems) {
            if (elems > Integer.MAX_VALUE - 64) {
                throw new IllegalArgumentException("GEMM operand A too large to pack: " + elems + " elements");
            }
            p = new float[(int) elems];
            PACKED_A.set(p);
        }
        return p;
    }

    /**
     * A's row stride in its copy: k rounded up to 16, plus 16 when that is a multiple of 256 floats,
     * so that eight row streams (the attention kernels' q and score rows as they are interleaved;
     * without vectors, every A read in place) do not map to one set of L1. A packed MR-row panel
     * spans MR·lda floats.
     */
    static int lda(int k) {
        int l = (k + 15) / 16 * 16;
        return l % 256 == 0 ? l + 16 : l;
    }

    /** bPacked: B's panels packed once ({@link PackedWeight}), or null to pack b here (then b is read). */
    static void core(int batches, Matrix a, long[] aOff, Matrix b, long[] bOff, MemorySegment bPacked, Matrix c, long[] cOff,
                     Matrix res, long[] rOff, Matrix res2, long[] r2Off, int m, int n, int k, GemmEpilogue ep) {
        if (m == 0 || n == 0) {
            return;
        }
        int nPad = (n + NR - 1) / NR * NR;
        int mPad = (m + MR - 1) / MR * MR;
        int kb0 = kBlock(k);
        int kBlocks = (k + kb0 - 1) / kb0;
        // 1. pack A and B once per distinct batch offset (broadcast batches share one packing)
        int[] aIndex = new int[batches];
        long[] aDistinct = distinct(aOff, aIndex);
        int[] bIndex = new int[batches];
        long[] bDistinct = distinct(bOff, bIndex);
        int lda = lda(k);
        long aSize = (long) mPad * lda;
        long bSize = (long) nPad * k;
        float[] ap = packedA(aSize * aDistinct.length);
        MemorySegment bp = bPacked != null ? bPacked : packedB(bSize * bDistinct.length);
        int nPanels = nPad / NR;
        int aGroups = (mPad + 63) / 64;
        int bGroups = (nPanels + 7) / 8;
        int aTasks = aDistinct.length * aGroups;
        int bTasks = bPacked != null ? 0 : bDistinct.length * kBlocks * bGroups;
        Parallel.forEach(aTasks + bTasks, task -> {
            if (task < aTasks) {
                int g = task % aGroups;
                int pi = task / aGroups;
                int i0 = g * 64;
                GemmPacking.copyA(a, aDistinct[pi], i0, Math.min(64, mPad - i0), m, k, ap, Math.toIntExact(pi * aSize + (long) i0 * lda), lda);
                return;
            }
            float[] tmp = GemmTile.scratch()[1];
            float[] panel = GemmTile.scratch()[4];
            int t = task - aTasks;
            int g = t % bGroups;
            int kb = t / bGroups % kBlocks;
            int pi = t / bGroups / kBlocks;
            int k0 = kb * kb0;
            int kc = Math.min(kb0, k - k0);
            long base = pi * bSize + (long) k0 * nPad;
            for (int jp = g * 8; jp < Math.min(nPanels, g * 8 + 8); jp++) {
                GemmPacking.packB(b, bDistinct[pi], k0, kc, jp * NR, n, bp, base + (long) jp * kc * NR, tmp, panel);
            }
        });
        // 2. tiles of C
        float[] biasF = Rows.vector(ep.bias());
        // Row blocks of up to MC rows, even (a multiple of MR each): M = 1100 is 4 × 224 + 204 rows, not
        // 4 × 256 + 76, whose last block would run a short tile; columns: GemmTiles.
        int mTiles = (m + MC - 1) / MC;
        int mcBlock = ((m + mTiles - 1) / mTiles + MR - 1) / MR * MR;
        int[] cols = GemmTiles.columns(n, (long) batches * mTiles, CpuConfig.THREADS);
        int nTiles = cols.length - 1;
        Parallel.forEach(batches * mTiles * nTiles, task -> {
            int nt = task % nTiles;
            int mt = task / nTiles % mTiles;
            int t = task / nTiles / mTiles;
            GemmTile.run(ap, (int) (aIndex[t] * aSize), lda, bp, bIndex[t] * bSize, nPad, c, cOff[t], res, rOff[t], res2, r2Off[t], biasF, ep,
                    mt * mcBlock, Math.min(mcBlock, m - mt * mcBlock), cols[nt], cols[nt + 1] - cols[nt], k);
        });
    }

    /** The distinct values of {@code offs}, in first-seen order; index[t] = position of offs[t] among them. */
    private static long[] distinct(long[] offs, int[] index) {
        Map<Long, Integer> seen = new HashMap<>();
        for (int t = 0; t < offs.length; t++) {
            index[t] = seen.computeIfAbsent(offs[t], x -> seen.size());
        }
        long[] d = new long[seen.size()];
        seen.forEach((off, i) -> d[i] = off);
        return d;
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

    private static Matrix matrixOrNull(View v) {
        return v == null ? null : matrixOf2(v);
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
