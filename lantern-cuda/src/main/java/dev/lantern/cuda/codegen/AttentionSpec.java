package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

/**
 * Fused scaled-dot-product attention, FlashAttention-2 style:
 * {@code o = softmax(q k^T * scale [causal mask]) v}, f32 softmax and accumulation.
 *
 * <pre>
 * q: (batch, heads, seq_q, head_dim), k, v: (batch, heads / group, seq_k, head_dim), o like q
 * </pre>
 *
 * With {@code group > 1} (grouped-query attention) query head h reads K/V head h / group, the
 * order of transformers' repeat_kv: k and v are read in place, never copied per query head.
 *
 * The causal mask is top-left aligned (PyTorch's {@code is_causal}): query i sees keys 0..i.
 * Kernel arguments: q, k, v, o, heads, seq_q, seq_k, then for each of q, k, v, o its
 * element strides over (batch, heads, seq); head_dim is contiguous. The fast path needs
 * 16-byte aligned rows (seq strides and base pointers multiples of 8 elements).
 *
 * @param batch, heads, seqQ, seqK the spec's shape (all run-time arguments of the kernel)
 * @param headDim compile-time: 64 and 128 take the tensor-core kernel, others the general one
 * @param ropeBase 0, or RoPE (rotate-half, theta_i = base^(-2i/d), position = the row's index in
 *                 its sequence) applied inside the kernel, as q (and k) arrive in shared memory
 * @param ropeKeys with RoPE: true, the kernel rotates q and k (only the warp-specialised TMA
 *                 wgmma tiles with two consumer warpgroups do this, {@link CudaTarget.WgmmaTile#fusesRope});
 *                 false, q only, k comes rotated (any warp-specialised TMA tile,
 *                 {@link CudaTarget.WgmmaTile#rotatesQueries}). Other tiles refuse the spec.
 *                 Always false without RoPE.
 * @param group    query heads per K/V head (1: plain attention); compile-time, divides {@code heads}
 * @param masked   an additive mask (dtype of q) on the scaled scores, softmax(scale q k^T + mask): the
 *                 kernel takes it (amask) and its (b, h, s) strides (0 where broadcast) after o's;
 *                 keys are contiguous in it
 * @param lse      the kernel also writes each row's log-sum-exp of the scaled (masked) scores, the
 *                 training step's saved lse ({@code log Σ_j e^(scale q_i·k_j + mask_ij)}, f32 (b, h, s)
 *                 contiguous, −inf for a row that sees no key: attention_lse's value): the kernel
 *                 takes it (lse) last, after the mask's arguments
 */
public record AttentionSpec(String name, long batch, long heads, long seqQ, long seqK, int headDim, boolean causal,
                            double scale, DType dtype, double ropeBase, boolean ropeKeys, int group, boolean masked,
                            boolean lse)
        implements KernelSpec {
    public AttentionSpec(String name, long batch, long heads, long seqQ, long seqK, int headDim, boolean causal,
                         double scale, DType dtype, double ropeBase, boolean ropeKeys, int group, boolean masked) {
        this(name, batch, heads, seqQ, seqK, headDim, causal, scale, dtype, ropeBase, ropeKeys, group, masked, false);
    }

    public AttentionSpec(String name, long batch, long heads, long seqQ, long seqK, int headDim, boolean causal,
                         double scale, DType dtype) {
        this(name, batch, heads, seqQ, seqK, headDim, causal, scale, dtype, 0, false, 1, false);
    }

    public AttentionSpec(String name, long batch, long heads, long seqQ, long seqK, int headDim, boolean causal,
                         double scale, DType dtype, double ropeBase, boolean ropeKeys) {
        this(name, batch, heads, seqQ, seqK, headDim, causal, scale, dtype, ropeBase, ropeKeys, 1, false);
    }

    public AttentionSpec {
        ropeKeys = ropeKeys && ropeBase != 0;
        KernelSpec.checkName(name);
        KernelSpec.checkPositive(batch, name + ": batch");
        KernelSpec.checkPositive(heads, name + ": heads");
        KernelSpec.checkPositive(seqQ, name + ": seq_q");
        KernelSpec.checkPositive(seqK, name + ": seq_k");
        KernelSpec.checkPositive(headDim, name + ": head_dim");
        KernelSpec.checkPositive(group, name + ": group");
        if (heads % group != 0) {
            throw new CodegenException(name + ": " + heads + " query heads do not split into groups of " + group
                    + " per K/V head (heads % group must be 0)");
        }
        if (headDim > 1024) {
            throw new CodegenException(name + ": head_dim " + headDim + " is over 1024");
        }
        if (!Double.isFinite(scale)) {
            throw new CodegenException(name + ": scale must be finite, got " + scale);
        }
        if (!(ropeBase == 0 || ropeBase > 1 && Double.isFinite(ropeBase)) || ropeBase > 0 && headDim % 2 != 0) {
            throw new CodegenException(name + ": rope base must be 0 (none) or a finite number above 1 with an even head_dim, got "
                    + ropeBase + " at head_dim " + headDim);
        }
    }

    /** The same attention with RoPE applied to q and k inside the kernel (base 0: none). */
    public AttentionSpec withRope(double base) {
        return new AttentionSpec(name, batch, heads, seqQ, seqK, headDim, causal, scale, dtype, base, true, group, masked, lse);
    }

    /** The same attention with RoPE applied to q inside the kernel; k is given rotated (base 0: none). */
    public AttentionSpec withQueryRope(double base) {
        return new AttentionSpec(name, batch, heads, seqQ, seqK, headDim, causal, scale, dtype, base, false, group, masked, lse);
    }

    /** The same attention over {@code heads / group} K/V heads, each read by {@code group} query heads. */
    public AttentionSpec withGroup(int group) {
        return new AttentionSpec(name, batch, heads, seqQ, seqK, headDim, causal, scale, dtype, ropeBase, ropeKeys, group, masked, lse);
    }

    /** The same attention with an additive mask on the scaled scores (the kernel's m argument). */
    public AttentionSpec withMask() {
        return new AttentionSpec(name, batch, heads, seqQ, seqK, headDim, causal, scale, dtype, ropeBase, ropeKeys, group, true, lse);
    }

    /** The same attention writing each row's log-sum-exp too (the lse argument, last). */
    public AttentionSpec withLse() {
        return new AttentionSpec(name, batch, heads, seqQ, seqK, headDim, causal, scale, dtype, ropeBase, ropeKeys, group, masked, true);
    }

    /** The number of K/V heads. */
    public long kvHeads() {
        return heads / group;
    }

    /** Whether the kernel rotates q (and, with {@link #ropeKeys}, k) itself. */
    public boolean fusedRope() {
        return ropeBase > 0;
    }

    /**
     * Whether {@code target} renders this spec with its RoPE inside the kernel: Hopper, and a
     * two-consumer TMA tile for q and k, any warp-specialised TMA tile for q alone.
     */
    public boolean ropeFusable(CudaTarget target) {
        return hopperPath(target) && (ropeKeys ? target.wgmmaAttention().fusesRope() : target.wgmmaAttention().rotatesQueries());
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
        if (fusedRope() && !ropeFusable(target)) {
            throw new CodegenException(name + ": RoPE inside attention needs the Hopper kernel with TMA copies and "
                    + (ropeKeys ? "two consumer warpgroups" : "a producer warp") + "; this target's tile is "
                    + (target.wgmmaAttention() == null ? "not a wgmma one" : target.wgmmaAttention().tag()));
        }
        if (hopperPath(target)) {
            return new AttentionWgmmaRenderer(this, target).render();
        }
        // a mask at head_dim 128 leaves the mma.sync tiles no registers (ptxas spills 8-28 bytes): the
        // general kernel takes it there (on Hopper the wgmma kernel serves head_dim 128 anyway)
        return fastPath(target) && !(masked && headDim >= 128) ? new AttentionMmaRenderer(this, target).render()
                : new AttentionGeneralRenderer(this, target).render();
    }
}
