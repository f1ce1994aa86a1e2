package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

/**
 * Fused scaled-dot-product attention, FlashAttention-2 style:
 * {@code o = softmax(q k^T * scale [causal mask]) v}, f32 softmax and accumulation.
 *
 * <pre>
 * q: (batch, heads, seq_q, head_dim), k, v: (batch, heads, seq_k, head_dim), o like q
 * </pre>
 *
 * The causal mask is top-left aligned (PyTorch's {@code is_causal}): query i sees keys 0..i.
 * Kernel arguments: q, k, v, o, heads, seq_q, seq_k, then for each of q, k, v, o its
 * element strides over (batch, heads, seq); head_dim is contiguous. The fast path needs
 * 16-byte aligned rows (seq strides and base pointers multiples of 8 elements).
 *
 * @param batch, heads, seqQ, seqK the spec's shape (all run-time arguments of the kernel)
 * @param headDim compile-time: 64 and 128 take the tensor-core kernel, others the general one
 */
public record AttentionSpec(String name, long batch, long heads, long seqQ, long seqK, int headDim, boolean causal,
                            double scale, DType dtype) implements KernelSpec {
    public AttentionSpec {
        KernelSpec.checkName(name);
        KernelSpec.checkPositive(batch, name + ": batch");
        KernelSpec.checkPositive(heads, name + ": heads");
        KernelSpec.checkPositive(seqQ, name + ": seq_q");
        KernelSpec.checkPositive(seqK, name + ": seq_k");
        KernelSpec.checkPositive(headDim, name + ": head_dim");
        if (headDim > 1024) {
            throw new CodegenException(name + ": head_dim " + headDim + " is over 1024");
        }
        if (!Double.isFinite(scale)) {
            throw new CodegenException(name + ": scale must be finite, got " + scale);
        }
    }

    /** The usual 1/sqrt(head_dim) scale. */
    public static AttentionSpec of(String name, long batch, long heads, long seqQ, long seqK, int headDim,
                                   boolean causal, DType dtype) {
        return new AttentionSpec(name, batch, heads, seqQ, seqK, headDim, causal, 1.0 / Math.sqrt(headDim), dtype);
    }

    /** Whether the tensor-core kernel serves this spec on {@code target}. */
    public boolean fastPath(CudaTarget target) {
        return target.tensorCoreMma() && (headDim == 64 || headDim == 128)
                && (dtype == DType.BF16 || dtype == DType.F16);
    }

    /** Matrix FLOPs: 4 * b * h * s_q * s_k * d, halved when causal (square). */
    public double flops() {
        return 4.0 * batch * heads * seqQ * seqK * headDim * (causal ? 0.5 : 1.0);
    }

    /** Whether the Hopper (wgmma, sm_90a) kernel serves this spec on {@code target}. */
    public boolean hopperPath(CudaTarget target) {
        return fastPath(target) && headDim == 128 && target.wgmmaAttention() != null;
    }

    @Override
    public CudaKernelSource render(CudaTarget target) {
        target.requireDtype(dtype, name);
        if (hopperPath(target)) {
            return new AttentionWgmmaRenderer(this, target).render();
        }
        return fastPath(target) ? new AttentionMmaRenderer(this, target).render()
                : new AttentionGeneralRenderer(this, target).render();
    }
}
