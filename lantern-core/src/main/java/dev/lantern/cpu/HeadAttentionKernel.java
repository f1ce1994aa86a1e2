package dev.lantern.cpu;

import jdk.incubator.vector.FloatVector;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import static dev.lantern.cpu.CpuConfig.F;
import static dev.lantern.cpu.GemmKernel.MR;
import static dev.lantern.cpu.GemmKernel.NR;

/**
 * One (batch, head) of attention straight on the GEMM micro-kernels, for the CPU's per-head strategy
 * (the engine's {@code HeadAttention}): q's rows (roped while copied) go into a heap array, k's rows
 * (roped) into native B panels (kᵀ, eight rows at a time transposed by {@link PanelTranspose}'s
 * permutes), v's rows into native B panels; every block of MR query rows is interleaved into a packed
 * A panel ({@link GemmKernel#PACKED_A}: 224 against 192 GFLOP/s for rows read in place, on an Intel
 * Xeon with AVX-512); S = q·kᵀ runs a kᵀ panel at a time over every row block into a thread-local
 * (s, t) score array; each row's softmax runs in place (scale, mask, causal limit); then the blocks'
 * probability rows are interleaved the same way and P·V runs a v panel at a time over every block.
 * The interleaves move s·(d + t) floats against s·t·(d + e) FMAs.
 *
 * <p>What it saves over two {@link Gemm#run} calls (JFR, cpu-small at one thread): no packing pass
 * through a shared heap copy of q or the scores, the rope copy vectorised instead of one {@link Convert#get} per element,
 * no heap segments fed to the GEMM ({@link GemmKernel}'s note), and under a causal mask only the
 * blocks at or left of the diagonal: a row block's scores stop at its last row's limit, and its
 * P·V runs over those columns only (about half the FMAs of both products at s = t).
 */
public final class HeadAttentionKernel {
    private HeadAttentionKernel() {}

    /** Per-thread buffers: q rows, scores, a row, a k panel, v panel staging, the output rows; native k and v panels. */
    private static final class Scratch {
        float[] q = new float[0];
        float[] scores = new float[0];
        float[] row = new float[0];
        float[] rot = new float[0];
        float[] panel = new float[0];
        float[] out = new float[0];
        float[] qp = new float[0];   // a block's MR q rows as one packed A panel (GemmKernel.PACKED_A)
        float[] pp = new float[0];   // a block's MR probability rows as one packed A panel
        float[] rows = new float[0]; // MR key rows, for their transpose into a kᵀ panel
        float[] rot8 = new float[0]; // those rows transposed, [p·MR + r]
        final float[] lanes = new float[F.length()];
        MemorySegment panels = MemorySegment.NULL;
    }

    /** MR lanes: one column of eight transposed key rows. */
    private static final jdk.incubator.vector.VectorSpecies<Float> F8 = FloatVector.SPECIES_256;

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    /**
     * out[batch, head] = softmax(scale·q·kᵀ + mask, causal)·v for one (batch, head); q (B, H, S, D),
     * k (B, HK, T, D), v (B, HK, T, E), out (B, H, S, E) as views of any strides and dtype, kvHead the
     * K/V head this head reads; cos/sin (max(S, T), D/2) rotate q and k (rotate-half) when not null.
     */
    public static void run(View q, View k, View v, View mask, View out, int batch, int head, int kvHead,
                           float scale, boolean causal, float[] cos, float[] sin) {
        int s = q.shape().dim(2);
        int d = q.shape().dim(3);
        int t = k.shape().dim(2);
        int e = v.shape().dim(3);
        int sPad = (s + MR - 1) / MR * MR;
        int tPad = (t + NR - 1) / NR * NR;
        int ePad = (e + NR - 1) / NR * NR;
        int ldq = Gemm.lda(d);
        int lds = Gemm.lda(tPad);
        Scratch sc = scratch(sPad * ldq, sPad * lds, Math.max(d, e), (long) Math.max(d, t) * NR, (long) sPad * ePad,
                (long) tPad * d + (long) ePad * t);
        sc.qp = grow(sc.qp, (long) sPad * d);
        sc.pp = grow(sc.pp, (long) sPad * t);
        sc.rows = grow(sc.rows, (long) MR * d);
        sc.rot8 = grow(sc.rot8, (long) MR * d);
        long kBase = 0;
        long vBase = (long) tPad * d;
        loadQ(q, batch, head, sc, ldq, cos, sin);
        packK(k, batch, kvHead, sc, kBase, cos, sin);
        packV(v, batch, kvHead, sc, vBase);
        int blocks = sPad / MR;
        long[] os = out.strides();
        long outBase = out.offset() + batch * os[0] + head * os[1];
        // S = q·kᵀ a panel of kᵀ at a time over every row block, so that the panel stays in L1 while the
        // blocks' q panels stream past it (row block first, all of kᵀ went through L1 per block)
        float[] qa = sc.q;
        if (GemmKernel.PACKED_A) {
            for (int b = 0; b < blocks; b++) {
                GemmPacking.interleave(sc.q, b * MR * ldq, ldq, d, sc.qp, b * MR * d);
            }
            qa = sc.qp;
        }
        for (int jp = 0; jp < tPad / NR; jp++) {
            for (int b = blocks - 1; b >= 0 && jp < colPanels(causal, t, b * MR); b--) {
                int qo = GemmKernel.PACKED_A ? b * MR * d : b * MR * ldq;
                GemmKernel.runPacked(qa, qo, ldq, sc.panels, kBase + (long) jp * d * NR, d, sc.scores, b * MR * lds + jp * NR, lds, false);
            }
        }
        for (int i = 0; i < s; i++) {
            int cols = cols(causal, t, i / MR * MR);
            int valid = causal ? Math.min(t, i + 1) : t;
            int off = i * lds;
            if (mask != null) {
                scaleRow(sc.scores, off, valid, scale);
                AttentionMask.addRow(mask, batch, head, i, 0, valid, sc.scores, off);
                softmax(sc.scores, off, valid, 1f, sc.lanes);
            } else {
                softmax(sc.scores, off, valid, scale, sc.lanes);
            }
            Arrays.fill(sc.scores, off + valid, off + cols, 0f);
        }
        // out = P·v, likewise a panel of v at a time over every row block (a block's P panel runs over its causal columns only)
        float[] pa = sc.scores;
        if (GemmKernel.PACKED_A) {
            for (int b = 0; b < blocks; b++) {
                GemmPacking.interleave(sc.scores, b * MR * lds, lds, cols(causal, t, b * MR), sc.pp, b * MR * t);
            }
            pa = sc.pp;
        }
        for (int jp = 0; jp < ePad / NR; jp++) {
            for (int b = 0; b < blocks; b++) {
                int po = GemmKernel.PACKED_A ? b * MR * t : b * MR * lds;
                GemmKernel.runPacked(pa, po, lds, sc.panels, vBase + (long) jp * t * NR, cols(causal, t, b * MR), sc.out,
                        b * MR * ePad + jp * NR, ePad, false);
            }
        }
        for (int i = 0; i < s; i++) {
            Convert.store(sc.out, i * ePad, out.segment(), out.dtype(), outBase + i * os[2], os[3], e);
        }
    }

    /** Columns of S a row block starting at row i0 computes: up to its last row's causal limit, else all t. */
    private static int cols(boolean causal, int t, int i0) {
        return causal ? Math.min(t, i0 + MR) : t;
    }

    /** kᵀ panels a row block starting at row i0 needs. */
    private static int colPanels(boolean causal, int t, int i0) {
        return (cols(causal, t, i0) + NR - 1) / NR;
    }

    /** q's rows (roped) into sc.q, row i at i·ldq; the rows up to the next multiple of MR are zero. */
    private static void loadQ(View q, int batch, int head, Scratch sc, int ldq, float[] cos, float[] sin) {
        int s = q.shape().dim(2);
        int d = q.shape().dim(3);
        long[] st = q.strides();
        long base = q.offset() + batch * st[0] + head * st[1];
        for (int i = 0; i < s; i++) {
            if (cos == null) {
                Convert.load(q.segment(), q.dtype(), base + i * st[2], st[3], sc.q, i * ldq, d);
            } else {
                Convert.load(q.segment(), q.dtype(), base + i * st[2], st[3], sc.row, 0, d);
                rope(sc.row, sc.q, i * ldq, d, i, cos, sin);
            }
        }
        int sPad = (s + MR - 1) / MR * MR;
        Arrays.fill(sc.q, s * ldq, sPad * ldq, 0f);
    }

    /** k's rows (roped) as B panels of kᵀ (d × NR each: [p·NR + c] = k[jp·NR + c, p]), zero past t. */
    private static void packK(View k, int batch, int kvHead, Scratch sc, long at, float[] cos, float[] sin) {
        int t = k.shape().dim(2);
        int d = k.shape().dim(3);
        long[] st = k.strides();
        long base = k.offset() + batch * st[0] + kvHead * st[1];
        float[] panel = sc.panel;
        for (int j0 = 0; j0 < t; j0 += NR) {
            int n = Math.min(NR, t - j0);
            if (PanelTranspose.AVAILABLE) {
                // eight keys at a time: their rows transposed by permutes into [p·8 + r], then eight floats a
                // step into the panel (a scalar store an element before: most of this kernel's packing time)
                for (int c0 = 0; c0 < NR; c0 += MR) {
                    for (int r = 0; r < MR; r++) {
                        loadKey(k, base, st, j0 + c0 + r, t, d, sc.rows, r * d, cos, sin, sc);
                    }
                    PanelTranspose.fromRows(sc.rows, 0, d, d, sc.rot8, 0);
                    for (int p = 0; p < d; p++) {
                        FloatVector.fromArray(F8, sc.rot8, p * MR).intoArray(panel, p * NR + c0);
                    }
                }
            } else {
                if (n < NR) {
                    Arrays.fill(panel, 0, d * NR, 0f);
                }
                for (int c = 0; c < n; c++) {
                    loadKey(k, base, st, j0 + c, t, d, sc.row, 0, cos, sin, sc);
                    for (int p = 0; p < d; p++) {
                        panel[p * NR + c] = sc.row[p];
                    }
                }
            }
            MemorySegment.copy(panel, 0, sc.panels, Convert.F32, (at + (long) j0 * d) * 4, d * NR);
        }
    }

    /** Key j's row (roped) into dst[o..o+d); zeros for j ≥ t. */
    private static void loadKey(View k, long base, long[] st, int j, int t, int d, float[] dst, int o, float[] cos, float[] sin,
                                Scratch sc) {
        if (j >= t) {
            Arrays.fill(dst, o, o + d, 0f);
        } else if (cos == null) {
            Convert.load(k.segment(), k.dtype(), base + j * st[2], st[3], dst, o, d);
        } else {
            Convert.load(k.segment(), k.dtype(), base + j * st[2], st[3], sc.rot, 0, d);
            rope(sc.rot, dst, o, d, j, cos, sin);
        }
    }

    /** v's columns as B panels (t × NR each: [p·NR + c] = v[p, jp·NR + c]), zero past e. */
    private static void packV(View v, int batch, int kvHead, Scratch sc, long at) {
        int t = v.shape().dim(2);
        int e = v.shape().dim(3);
        long[] st = v.strides();
        long base = v.offset() + batch * st[0] + kvHead * st[1];
        float[] panel = sc.panel;
        for (int c0 = 0; c0 < e; c0 += NR) {
            int n = Math.min(NR, e - c0);
            for (int p = 0; p < t; p++) {
                Convert.load(v.segment(), v.dtype(), base + p * st[2] + c0 * st[3], st[3], panel, p * NR, n);
                if (n < NR) {
                    Arrays.fill(panel, p * NR + n, (p + 1) * NR, 0f);
                }
            }
            MemorySegment.copy(panel, 0, sc.panels, Convert.F32, (at + (long) c0 * t) * 4, t * NR);
        }
    }

    /** dst[o..o+d) = x rotated at position pos (rotate-half): x[i]·cos − x[i+d/2]·sin, x[i+d/2]·cos + x[i]·sin. */
    private static void rope(float[] x, float[] dst, int o, int d, int pos, float[] cos, float[] sin) {
        int half = d / 2;
        int tb = pos * half;
        int i = 0;
        for (int bound = CpuConfig.vectorBound(half); i < bound; i += F.length()) {
            FloatVector x0 = FloatVector.fromArray(F, x, i);
            FloatVector x1 = FloatVector.fromArray(F, x, i + half);
            FloatVector c = FloatVector.fromArray(F, cos, tb + i);
            FloatVector sn = FloatVector.fromArray(F, sin, tb + i);
            x0.mul(c).sub(x1.mul(sn)).intoArray(dst, o + i);
            x1.mul(c).add(x0.mul(sn)).intoArray(dst, o + i + half);
        }
        for (; i < half; i++) {
            float a = x[i];
            float b = x[i + half];
            dst[o + i] = a * cos[tb + i] - b * sin[tb + i];
            dst[o + i + half] = b * cos[tb + i] + a * sin[tb + i];
        }
    }

    /**
     * a[off..off+n) = softmax(scale·a[off..off+n)) in place, as {@link Softmax#softmaxRow} (max, VMath's
     * exp, the lane-order sum) but with the row's tail in the vector loops: the lanes past n are set to
     * −∞ first, so that their exp is exactly 0 (a causal row is rarely a whole number of vectors, and
     * Softmax's scalar tail was most of this kernel's softmax time). The row must have room up to the
     * next multiple of the vector length (the score rows are padded to NR).
     */
    static void softmax(float[] a, int off, int n, float scale, float[] lanes) {
        if (!CpuConfig.VECTOR || scale < 0) {
            Softmax.softmaxRow(a, off, n, scale);
            return;
        }
        int w = F.length();
        int bound = (n + w - 1) / w * w;
        Arrays.fill(a, off + n, off + bound, Float.NEGATIVE_INFINITY);
        FloatVector mx = FloatVector.broadcast(F, Float.NEGATIVE_INFINITY);
        for (int i = 0; i < bound; i += w) {
            mx = mx.max(FloatVector.fromArray(F, a, off + i));
        }
        float max = mx.reduceLanes(jdk.incubator.vector.VectorOperators.MAX) * scale;
        FloatVector acc = FloatVector.zero(F);
        for (int i = 0; i < bound; i += w) {
            FloatVector e = VMath.exp(FloatVector.fromArray(F, a, off + i).mul(scale).sub(max));
            e.intoArray(a, off + i);
            acc = acc.add(e);
        }
        // the lane-order sum as Rows.hsum, on a scratch array: hsum is not always inlined here, and then
        // acc was boxed and a lane array allocated per row (180 KB per cpu-small attention call)
        acc.intoArray(lanes, 0);
        float sum = 0;
        for (int i = 0; i < w; i++) {
            sum += lanes[i];
        }
        float inv = 1f / sum;
        for (int i = 0; i < bound; i += w) {
            FloatVector.fromArray(F, a, off + i).mul(inv).intoArray(a, off + i);
        }
    }

    private static void scaleRow(float[] a, int off, int n, float scale) {
        for (int i = 0; i < n; i++) {
            a[off + i] *= scale;
        }
    }

    private static Scratch scratch(long q, long scores, int row, long panel, long out, long panels) {
        Scratch sc = SCRATCH.get();
        sc.q = grow(sc.q, q);
        sc.scores = grow(sc.scores, scores);
        sc.row = grow(sc.row, row);
        sc.rot = grow(sc.rot, row);
        sc.panel = grow(sc.panel, panel);
        sc.out = grow(sc.out, out);
        if (sc.panels.byteSize() < panels * 4) {
            sc.panels = Arena.ofAuto().allocate(Math.max(4, panels * 4), 64);
        }
        return sc;
    }

    private static float[] grow(float[] a, long n) {
        return a.length >= n ? a : new float[Math.toIntExact(n)];
    }
}
