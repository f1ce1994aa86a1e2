package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

import java.util.Set;

/**
 * What the renderers need to know about one GPU: data, not control flow. A renderer reads
 * its tile choices from here, so another GPU is another constant, not another branch.
 *
 * @param arch              the nvcc / NVRTC architecture name, e.g. {@code sm_90}
 * @param smCount           multiprocessors, for grid sizing of grid-stride loops
 * @param warpSize          threads per warp
 * @param maxThreadsPerBlock upper bound on a CTA
 * @param sharedBytesPerBlock the opt-in dynamic shared-memory limit of one CTA
 * @param vectorBytes       width of one vector load or store (16 bytes: LDG.128)
 * @param dtypes            storage types the kernels accept
 * @param rowVectorsPerThread how many 16-byte vectors one thread keeps of a row in the
 *                          row-in-registers norm and softmax kernels (loads in flight)
 * @param attention64       tile choice of the fused attention at head_dim 64
 * @param attention128      tile choice of the fused attention at head_dim 128
 * @param tensorCoreMma     whether {@code mma.sync.m16n8k16} on bf16/f16 exists (sm_80+)
 * @param wgmmaAttention    tile of the Hopper attention kernel at head_dim 128 ({@code wgmma},
 *                          built for the arch-specific {@code sm_90a}); null where the GPU has no
 *                          wgmma or the mma.sync kernel is wanted
 */
public record CudaTarget(
        String arch,
        int smCount,
        int warpSize,
        int maxThreadsPerBlock,
        int sharedBytesPerBlock,
        int vectorBytes,
        Set<DType> dtypes,
        int rowVectorsPerThread,
        AttentionTile attention64,
        AttentionTile attention128,
        boolean tensorCoreMma,
        WgmmaTile wgmmaAttention) {

    /**
     * Tiles of the tensor-core attention: {@code warps} warps per CTA, each owning
     * {@code rowTiles} x 16 query rows, K/V tiles of {@code keyTile} keys, {@code stages} K/V
     * buffers. With two row tiles each K/V fragment read from shared memory feeds twice the
     * MMAs (and Q is re-read from shared memory instead of kept in registers). One stage is
     * FlashAttention-2's interleave (V_j loads during S = QK_j^T, K_j+1 during PV_j); two
     * stages load K_j+1 and V_j+1 together during all of tile j.
     */
    public record AttentionTile(int warps, int rowTiles, int keyTile, int stages) {
        public AttentionTile {
            if (warps < 1 || warps > 16 || rowTiles < 1 || rowTiles > 2 || keyTile < 16 || keyTile % 16 != 0
                    || stages < 1 || stages > 2) {
                throw new IllegalArgumentException("bad attention tile " + warps + "/" + rowTiles + "/" + keyTile
                        + "/" + stages);
            }
        }

        public int queryRows() {
            return 16 * rowTiles * warps;
        }

        /** A short name for dumps and sweeps: {@code w4m2k32s1}. */
        public String tag() {
            return "w" + warps + "m" + rowTiles + "k" + keyTile + "s" + stages;
        }
    }

    /**
     * Tiles of the wgmma attention (64 query rows per consumer warpgroup): K/V tiles of
     * {@code keyTile} keys, {@code stages} buffers each of K and V in shared memory, and the
     * CTAs per SM the register allocation is held to ({@code __launch_bounds__} minimum);
     * {@code qInRegisters}: Q's A fragments stay in registers (S = Q K^T reads only K from
     * shared memory) instead of being re-read from shared memory by every k-step;
     * {@code consumers} 0: one warpgroup that both loads and computes; 1 or 2: that many consumer
     * warpgroups and one producer warp that alone issues the copies (mbarrier hand-over);
     * {@code tma}: the producer copies with the tensor memory accelerator (one thread, tensor
     * maps passed as kernel arguments) instead of cp.async.
     */
    /**
     * A tile of the Hopper (wgmma) attention kernel.
     *
     * @param consumers 0: every thread loads and computes; 1 or 2: consumer warpgroups beside a
     *                  producer (warp-specialised)
     * @param tma       the producer copies with the tensor-memory accelerator (needs consumers)
     * @param pingPong  two consumers take turns issuing their GEMMs (named barriers), so one's
     *                  softmax runs while the other's GEMMs occupy the tensor cores (FlashAttention-3's
     *                  inter-warpgroup overlap; needs 2 consumers)
     * @param persistentQ 0: one CTA per query tile; 1 or 2: persistent CTAs, one per SM slot, each
     *                  walking query tiles, with that many Q buffers (ADR 0008; needs TMA)
     */
    public record WgmmaTile(int keyTile, int stages, int minBlocks, boolean qInRegisters, int consumers, boolean tma,
                            boolean pingPong, int persistentQ) {
        public WgmmaTile(int keyTile, int stages, int minBlocks, boolean qInRegisters) {
            this(keyTile, stages, minBlocks, qInRegisters, 0, false, false, 0);
        }

        public WgmmaTile(int keyTile, int stages, int minBlocks, boolean qInRegisters, int consumers) {
            this(keyTile, stages, minBlocks, qInRegisters, consumers, false, false, 0);
        }

        public WgmmaTile(int keyTile, int stages, int minBlocks, boolean qInRegisters, int consumers, boolean tma) {
            this(keyTile, stages, minBlocks, qInRegisters, consumers, tma, false, 0);
        }

        public WgmmaTile(int keyTile, int stages, int minBlocks, boolean qInRegisters, int consumers, boolean tma,
                         boolean pingPong) {
            this(keyTile, stages, minBlocks, qInRegisters, consumers, tma, pingPong, 0);
        }

        public WgmmaTile {
            if ((keyTile != 64 && keyTile != 128) || stages < 1 || stages > 3 || minBlocks < 1 || minBlocks > 3
                    || consumers < 0 || consumers > 2 || (consumers > 0 && stages < 2) || (tma && consumers == 0)
                    || (pingPong && consumers != 2) || persistentQ < 0 || persistentQ > 2 || (persistentQ > 0 && !tma)) {
                throw new IllegalArgumentException("bad wgmma attention tile " + keyTile + "/" + stages + "/" + minBlocks
                        + "/" + consumers + (pingPong ? "/ping-pong" : "")
                        + (persistentQ > 0 ? "/persistent with " + persistentQ + " Q buffer(s)" + (tma ? "" : " without TMA") : ""));
            }
        }

        /** The same tile with persistent CTAs: one per SM (times minBlocks), each walking query tiles. */
        public WgmmaTile asPersistent() {
            return asPersistent(1);
        }

        /**
         * Persistent CTAs with {@code qBuffers} Q buffers: with 2 the producer copies the next query
         * tile's Q while the consumers still read the current one.
         */
        public WgmmaTile asPersistent(int qBuffers) {
            return new WgmmaTile(keyTile, stages, minBlocks, qInRegisters, consumers, tma, pingPong, qBuffers);
        }

        /** Persistent CTAs (ADR 0008): {@link #persistentQ} is their number of Q buffers, 0 otherwise. */
        public boolean persistent() {
            return persistentQ > 0;
        }

        /** Q buffers in shared memory: 2 for a double-buffered persistent tile, else 1. */
        public int qBuffers() {
            return Math.max(1, persistentQ);
        }

        /**
         * Whether the kernel can apply RoPE to q and k itself: the producer is then a whole
         * warpgroup (two consumers with TMA), whose threads rotate each K tile in shared memory.
         * Not with persistent CTAs.
         */
        public boolean fusesRope() {
            return consumers == 2 && tma && !persistent();
        }

        /** Whether the consumers can rotate their Q in place (RoPE on q alone): any warp-specialised TMA tile. */
        public boolean rotatesQueries() {
            return consumers > 0 && tma;
        }

        /** A short name for dumps and sweeps: {@code gk64s2b1}, {@code gk64s1b1q}, {@code gk128s2b1c2tp}, {@code gk128s2b1c2tpP}. */
        public String tag() {
            return "gk" + keyTile + "s" + stages + "b" + minBlocks + (qInRegisters ? "q" : "")
                    + (consumers > 0 ? "c" + consumers : "") + (tma ? "t" : "") + (pingPong ? "p" : "")
                    + (persistentQ == 1 ? "P" : persistentQ == 2 ? "P2" : "");
        }
    }

    /** The default wgmma attention tile on Hopper. */
    public static final WgmmaTile HOPPER_ATTENTION = new WgmmaTile(64, 2, 2, false, 1, true);

    /** NVIDIA H200 (and H100 SXM): sm_90, 132 SMs, 227 KiB opt-in shared memory per CTA. */
    public static final CudaTarget H200 = new CudaTarget(
            "sm_90", 132, 32, 1024, 227 * 1024, 16,
            Set.of(DType.F32, DType.F16, DType.BF16),
            4, new AttentionTile(4, 1, 64, 1), new AttentionTile(4, 1, 64, 1), true, HOPPER_ATTENTION);

    public CudaTarget {
        dtypes = Set.copyOf(dtypes);
        if (vectorBytes != 16 && vectorBytes != 8) {
            throw new IllegalArgumentException("vectorBytes must be 8 or 16, got " + vectorBytes);
        }
    }

    /** Elements of {@code dtype} in one vector load. */
    public int vectorWidth(DType dtype) {
        return vectorBytes / dtype.bytes();
    }

    /** A copy with other attention tile choices: the basic tile sweep renders each. */
    public CudaTarget withAttention(AttentionTile tile64, AttentionTile tile128) {
        return new CudaTarget(arch, smCount, warpSize, maxThreadsPerBlock, sharedBytesPerBlock, vectorBytes,
                dtypes, rowVectorsPerThread, tile64, tile128, tensorCoreMma, null);
    }

    /** A copy with another number of row vectors per thread for the row kernels. */
    public CudaTarget withRowVectorsPerThread(int vectors) {
        return new CudaTarget(arch, smCount, warpSize, maxThreadsPerBlock, sharedBytesPerBlock, vectorBytes,
                dtypes, vectors, attention64, attention128, tensorCoreMma, wgmmaAttention);
    }

    /** A copy whose head_dim-128 attention is the wgmma kernel with {@code tile} (null: the mma.sync kernel). */
    public CudaTarget withWgmmaAttention(WgmmaTile tile) {
        return new CudaTarget(arch, smCount, warpSize, maxThreadsPerBlock, sharedBytesPerBlock, vectorBytes,
                dtypes, rowVectorsPerThread, attention64, attention128, tensorCoreMma, tile);
    }

    /**
     * A copy with {@code sms} multiprocessors (a partition of the GPU; tests use few, so that each
     * persistent CTA walks many query tiles of a small problem).
     */
    public CudaTarget withSmCount(int sms) {
        return new CudaTarget(arch, sms, warpSize, maxThreadsPerBlock, sharedBytesPerBlock, vectorBytes,
                dtypes, rowVectorsPerThread, attention64, attention128, tensorCoreMma, wgmmaAttention);
    }

    void requireDtype(DType dtype, String what) {
        if (!dtypes.contains(dtype)) {
            throw new CodegenException(what + ": dtype " + dtype + " is not supported on " + arch
                    + " (supported: " + dtypes + ")");
        }
    }
}
