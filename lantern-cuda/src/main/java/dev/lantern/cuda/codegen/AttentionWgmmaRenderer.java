package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

/**
 * The Hopper attention kernel for head_dim 128, bf16 or f16, on sm_90a: both matrix products on
 * {@code wgmma} (warpgroup MMA, f32 accumulators in registers), K and V read by the tensor cores
 * straight from 128-byte-swizzled shared memory.
 *
 * <pre>
 * CTA  = one warpgroup (128 threads), 64 query rows q0..; several CTAs per SM overlap each other
 * smem = Q[2][64][64] | K stages [2][BC][64] | V stages [2][BC][64]   (bf16, 1024-byte aligned)
 *        every tile stored as two column halves of 64 elements: rows of 128 bytes, 16-byte chunk
 *        c of row r at c ^ (r % 8) (the SW128 pattern wgmma's descriptors name)
 * S = Q K^T      wgmma m64nBCk16, A and B from shared memory (both K-major), 8 k-steps
 * O += P V       wgmma m64n128k16, P from registers (re-packed S accumulators), V from shared
 *                memory read N-major (transposed by the descriptor), BC / 16 k-steps
 * prologue: S_0, its softmax, P_0
 * loop over key tiles j = 1.. (causal: only tiles with a key &lt;= the CTA's last query):
 *   issue S_j = Q K_j^T, then O += P_j-1 V_j-1 (both async); wait for S_j only
 *   mask (diagonal and ragged tiles), online softmax of S_j in f32, log2 domain, while P V runs
 *   wait for P V; O *= exp(m_old - m_new); P_j = S_j packed to bf16
 *   (two stages: K_j+1 and V_j load during tile j; one stage: each reloads as soon as its
 *   buffer's wgmma is done)
 * epilogue: O += P V of the last tile; O /= l, stored straight from the accumulators.
 * </pre>
 * Rows past seq_q / keys past seq_k are zero-filled by cp.async and masked, so any sequence
 * length is served. The same argument list as the mma.sync kernel ({@link AttentionParams}).
 *
 * <p>This class checks the tile, sizes shared memory, writes the kernel's header and sizes the
 * persistent grid; the kernels are {@link AttentionWgmmaPlain} (one warpgroup that copies and
 * computes) and {@link AttentionWgmmaSpecialized} (the barriers, then {@link AttentionWgmmaProducer}
 * and {@link AttentionWgmmaConsumer}); both compute through {@link AttentionWgmmaMath}.
 */
final class AttentionWgmmaRenderer {
    private final AttentionSpec spec;
    private final CudaTarget.WgmmaTile tile;
    private final int smCount;
    private final String t;
    private final String mmaType;
    private final String pack2;
    private final String vec2;
    private final boolean persistent;
    private final AttentionWgmmaMath math;

    AttentionWgmmaRenderer(AttentionSpec spec, CudaTarget target) {
        this.spec = spec;
        this.tile = target.wgmmaAttention();
        this.smCount = target.smCount();
        this.t = CudaPrelude.cType(spec.dtype());
        boolean bf16 = spec.dtype() == DType.BF16;
        this.mmaType = bf16 ? "bf16" : "f16";
        this.pack2 = bf16 ? "__floats2bfloat162_rn" : "__floats2half2_rn";
        this.vec2 = bf16 ? "__nv_bfloat162" : "__half2";
        this.persistent = tile.persistent();
        this.math = new AttentionWgmmaMath(spec, tile, pack2, vec2);
        if (spec.headDim() != 128) {
            throw new CodegenException(spec.name() + ": the wgmma attention kernel needs head_dim 128, got "
                    + spec.headDim());
        }
        if (sharedBytes() > target.sharedBytesPerBlock()) {
            throw new CodegenException(spec.name() + ": attention needs " + sharedBytes()
                    + " bytes of shared memory, " + target.arch() + " allows " + target.sharedBytesPerBlock());
        }
    }

    /** Q, the K and V stages, and 1 KiB of slack to align the swizzle atoms to 1024 bytes. */
    int sharedBytes() {
        int barriers = tile.consumers() > 0 ? 128 : 0;
        return tile.qBuffers() * Math.max(1, tile.consumers()) * 64 * 256 + tile.stages() * 2 * tile.keyTile() * 256
                + 1024 + barriers;
    }

    CudaKernelSource render() {
        return tile.consumers() > 0 ? new AttentionWgmmaSpecialized(this).render() : new AttentionWgmmaPlain(this).render();
    }

    AttentionSpec spec() {
        return spec;
    }

    CudaTarget.WgmmaTile tile() {
        return tile;
    }

    /** Persistent CTAs (ADR 0008): each walks query tiles, counting their key tiles in {@code it0}. */
    boolean persistent() {
        return persistent;
    }

    int smCount() {
        return smCount;
    }

    /** The C element type (kernel parameters). */
    String elementType() {
        return t;
    }

    /** The consumer warpgroup's GEMMs, online softmax and store, shared by both kernels. */
    AttentionWgmmaMath math() {
        return math;
    }

    /**
     * Key tile {@code j}'s place in the CTA's ring of K and V stages: j itself, or with persistent
     * CTAs {@code it0 + j}, it0 counting the key tiles of the CTA's earlier query tiles.
     */
    String ring(String j) {
        return persistent ? "(it0 + " + j + ")" : j.contains(" ") ? "(" + j + ")" : j;
    }

    /**
     * Persistent CTAs: how many to launch for {@code tiles} query tiles, {@code qblocks} of them per
     * (batch, head). CTA c walks tiles c, c + grid, ...; a causal tile's work falls with its index in
     * the head, so the grid is kept coprime to qblocks and every CTA meets every index in turn.
     */
    static long persistentGrid(long tiles, long qblocks, int slots, boolean causal) {
        long g = Math.min(tiles, slots);
        while (causal && g > 1 && g < tiles && gcd(g, qblocks) != 1) {
            g--;
        }
        return Math.max(1, g);
    }

    private static long gcd(long a, long b) {
        return b == 0 ? a : gcd(b, a % b);
    }

    /** Persistent CTAs: the query tile's (batch, head), first row, o's base and its key tiles. */
    void emitTileStart(CudaEmitter e) {
        e.line("const long long bh = tile / qblocks;");
        e.line("const int q0 = (qblocks - 1 - (int) (tile % qblocks)) * BR;  // the head's heaviest causal block first");
        AttentionParams.emitBases(e, "T", false, spec);
        emitKeyTiles(e);
    }

    static void emitKeyTiles(CudaEmitter e) {
        e.line("int nk = (seq_k + BC - 1) / BC;");
        e.line("if (CAUSAL) nk = min(nk, (q0 + BR + BC - 1) / BC);  // tiles past the last query are fully masked");
    }

    /** The banner, the kernel's constants (after {@code shape}, its thread and tile line) and the helpers. */
    void emitHeader(CudaEmitter e, String variant, String shape, String qComment) {
        CudaPrelude.emit(e, "attention" + (spec.causal() ? " (causal)" : "") + ", head_dim 128, Hopper path (" + variant + ")");
        e.line(shape);
        e.line("constexpr int HALF = BC * 128;   // bytes of one 64-column half of a K or V tile");
        e.line("constexpr int QBYTES = 64 * 256, TBYTES = BC * 256;  // " + qComment);
        e.linef("constexpr bool CAUSAL = %s;", spec.causal());
        e.linef("constexpr float SCALE_LOG2 = %s;  // scale * log2(e)",
                ElementwiseRenderer.floatLiteral(spec.scale() * 1.4426950408889634));
        AttentionParams.emitMaskConstant(e, spec, spec.scale() > 0);
        e.line("typedef " + t + " T;");
        e.blank();
        WgmmaHelpers.emitKernelHelpers(e, tile.keyTile(), tile.qInRegisters(), mmaType, pack2, vec2);
    }
}
