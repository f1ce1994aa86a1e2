package dev.lantern.cpu;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import static dev.lantern.cpu.Gemm.KC;
import static dev.lantern.cpu.Gemm.MC;
import static dev.lantern.cpu.Gemm.NC;
import static dev.lantern.cpu.GemmKernel.MR;
import static dev.lantern.cpu.GemmKernel.NR;

/**
 * One (mc × nc) tile of C for {@link Gemm}: per K block, the micro-kernels over the tile's packed B
 * panels (each panel reused from L1 or L2 by all of the tile's A panels), into a per-thread f32 tile buffer; after
 * the last K block, the epilogue row by row over the still-hot buffer, stored in C's dtype.
 *
 * <p><b>The next B panel is touched while this one is used.</b> A panel (kc × NR f32: 96 KB for K = 768
 * with 512-bit vectors) comes from L3 or memory (the packed weights never stay in L2 between forwards)
 * and is then reused from L1 or L2 by every A panel of the tile. Left to itself, the whole fetch falls on
 * the first micro-kernel: the hardware prefetchers see no misses while the others reuse it, so
 * every new panel starts at memory's latency. So the first ⌈lines / (kc / 8)⌉ micro-kernels of a
 * panel run {@link GemmKernel#vector8PackedTouch}, which also loads one cache line of the next panel
 * every 8 k steps: the next panel arrives spread over this one's work (M = 128 and 16 A panels: the
 * whole of it). The next panel is the next column panel of this K block, or the tile's first of the
 * next K block; the tile's very first panel is not touched ahead. Same FMAs in the same order, so
 * the same bits. One core of an Intel Xeon with AVX-512, 2026-12-04, GEMMs on a packed weight with
 * cold B, touching against not, interleaved in one JVM: M = 128 1.10–1.20× (GPT-2's four layer
 * GEMMs and its LM head), M = 1024 1.02×; whole forwards in docs/cpu-backend.md. Loads that touched a
 * whole panel at once between micro-kernels lost (0.93×): a load that misses holds its place in the
 * reorder buffer, and a few at a time do not fill it. Only the 8-row kernel touches (AVX2's 4-row
 * kernel was not measured with it).
 */
final class GemmTile {
    private GemmTile() {}

    private static final ThreadLocal<float[][]> SCRATCH = new ThreadLocal<>();

    /**
     * Per-thread buffers: [0] the C tile (MC × NC), [1..3] and [5] rows of max(KC, NC), [4] one packed
     * panel, [6] one float where a tile leaves its touches' values.
     */
    static float[][] scratch() {
        float[][] s = SCRATCH.get();
        if (s == null) {
            int rowLen = Math.max(KC, NC);
            s = new float[][] {new float[MC * NC], new float[rowLen], new float[rowLen], new float[rowLen], new float[KC * Math.max(MR, NR)],
                new float[rowLen], new float[1]};
            SCRATCH.set(s);
        }
        return s;
    }

    /** Whether the micro-kernels touch the next B panel ahead (the 8-row packed kernel only). */
    static final boolean TOUCH = GemmKernel.PACKED_A && MR == 8;

    /** The tile at (i0, j0) of C: A packed from {@code aBase} (row stride lda), B's panels from element {@code bBase}. */
    static void run(float[] ap, int aBase, int lda, MemorySegment bp, long bBase, int nPad,
                    Gemm.Matrix c, long cOff, Gemm.Matrix res, long rOff, Gemm.Matrix res2, long r2Off,
                    float[] biasF, GemmEpilogue ep, int i0, int mc, int j0, int nc, int k) {
        float[][] s = scratch();
        float[] cbuf = s[0];
        int mPanels = (mc + MR - 1) / MR;
        int nPanels = (nc + NR - 1) / NR;
        if (k == 0) {
            Arrays.fill(cbuf, 0f);
        }
        int narrowRows = mc - (mPanels - 1) * MR;
        int wide = GemmNarrowKernel.takes(narrowRows) ? mPanels - 1 : mPanels;
        int sink = 0;
        int kb = Gemm.kBlock(k);
        for (int k0 = 0; k0 < k; k0 += kb) {
            int kc = Math.min(kb, k - k0);
            int aBlock = aBase + i0 * lda + (GemmKernel.PACKED_A ? MR * k0 : k0);
            long bBlock = bBase + (long) k0 * nPad + (long) (j0 / NR) * kc * NR;
            int steps = kc / 8; // the lines one touching kernel reaches: one every 8 k steps
            for (int jr = 0; jr < nPanels; jr++) {
                long panel = bBlock + (long) jr * kc * NR;
                long next = -1;
                int lines = 0;
                if (TOUCH && steps > 0) {
                    if (jr + 1 < nPanels) {
                        next = panel + (long) kc * NR;
                        lines = kc * NR / 16;
                    } else if (k0 + kb < k) {
                        int kcNext = Math.min(kb, k - k0 - kb);
                        next = bBase + (long) (k0 + kb) * nPad + (long) (j0 / NR) * kcNext * NR;
                        lines = kcNext * NR / 16;
                    }
                }
                int touchers = (lines + steps - 1) / Math.max(1, steps);
                for (int ir = 0; ir < wide; ir++) {
                    int ao = aBlock + ir * MR * lda;
                    int co = ir * MR * NC + jr * NR;
                    if (ir < touchers) {
                        // kc·8 bytes from line ir·steps of the next panel, ending inside it even for the
                        // last toucher (or starting before it, in this K block's panels, when it is short)
                        long from = Math.min((long) ir * steps * 64, (long) lines * 64 - 8L * kc);
                        sink |= GemmKernel.vector8PackedTouch(ap, ao, bp, panel * 4L, kc, cbuf, co, NC, k0 > 0, next * 4L + from);
                    } else {
                        GemmKernel.runPacked(ap, ao, lda, bp, panel, kc, cbuf, co, NC, k0 > 0);
                    }
                }
            }
            if (wide < mPanels) {
                // the last A panel holds 1..4 real rows: two B panels at a time, no FMA on padding rows
                int jr = 0;
                for (; jr + 2 <= nPanels; jr += 2) {
                    GemmNarrowKernel.run(narrowRows, ap, aBlock + wide * MR * lda, lda, bp, bBlock + (long) jr * kc * NR, kc,
                            cbuf, wide * MR * NC + jr * NR, NC, k0 > 0);
                }
                if (jr < nPanels) {
                    GemmKernel.runPacked(ap, aBlock + wide * MR * lda, lda, bp, bBlock + (long) jr * kc * NR, kc, cbuf, wide * MR * NC + jr * NR, NC, k0 > 0);
                }
            }
        }
        s[6][0] = sink; // the touches' values, kept so that the JIT keeps the loads
        // epilogue, row by row over the hot tile
        float[] resRow = res == null ? null : s[2];
        float[] res2Row = res2 == null ? null : s[5];
        float[] outRow = s[3];
        for (int i = 0; i < mc; i++) {
            if (res != null) {
                Convert.load(res.segment(), res.dtype(), rOff + res.offset() + (i0 + i) * res.rowStride() + j0 * res.colStride(), res.colStride(), resRow, 0, nc);
            }
            if (res2 != null) {
                Convert.load(res2.segment(), res2.dtype(), r2Off + res2.offset() + (i0 + i) * res2.rowStride() + j0 * res2.colStride(),
                        res2.colStride(), res2Row, 0, nc);
            }
            long cRow = cOff + c.offset() + (i0 + i) * c.rowStride() + j0 * c.colStride();
            if (ep.isIdentity()) {
                Convert.store(cbuf, i * NC, c.segment(), c.dtype(), cRow, c.colStride(), nc);
            } else {
                ep.apply(cbuf, i * NC, nc, biasF, j0, resRow, res2Row, outRow);
                Convert.store(outRow, 0, c.segment(), c.dtype(), cRow, c.colStride(), nc);
            }
        }
    }
}
