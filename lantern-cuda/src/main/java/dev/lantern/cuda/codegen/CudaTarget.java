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
 * @param attentionWarps64  warps per CTA of the fused attention at head_dim 64 (16 query rows each)
 * @param attentionWarps128 warps per CTA of the fused attention at head_dim 128
 * @param attentionKeyTile  keys per K/V tile of the fused attention
 * @param tensorCoreMma     whether {@code mma.sync.m16n8k16} on bf16/f16 exists (sm_80+)
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
        int attentionWarps64,
        int attentionWarps128,
        int attentionKeyTile,
        boolean tensorCoreMma) {

    /** NVIDIA H200 (and H100 SXM): sm_90, 132 SMs, 227 KiB opt-in shared memory per CTA. */
    public static final CudaTarget H200 = new CudaTarget(
            "sm_90", 132, 32, 1024, 227 * 1024, 16,
            Set.of(DType.F32, DType.F16, DType.BF16),
            4, 4, 4, 64, true);

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
    public CudaTarget withAttentionWarps(int warps64, int warps128) {
        return new CudaTarget(arch, smCount, warpSize, maxThreadsPerBlock, sharedBytesPerBlock, vectorBytes,
                dtypes, rowVectorsPerThread, warps64, warps128, attentionKeyTile, tensorCoreMma);
    }

    /** A copy with another number of row vectors per thread for the row kernels. */
    public CudaTarget withRowVectorsPerThread(int vectors) {
        return new CudaTarget(arch, smCount, warpSize, maxThreadsPerBlock, sharedBytesPerBlock, vectorBytes,
                dtypes, vectors, attentionWarps64, attentionWarps128, attentionKeyTile, tensorCoreMma);
    }

    void requireDtype(DType dtype, String what) {
        if (!dtypes.contains(dtype)) {
            throw new CodegenException(what + ": dtype " + dtype + " is not supported on " + arch
                    + " (supported: " + dtypes + ")");
        }
    }
}
