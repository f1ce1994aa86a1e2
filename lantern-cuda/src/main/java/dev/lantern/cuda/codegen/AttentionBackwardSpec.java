package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

/**
 * attention's backward kernels (the IR's attention_lse, attention_grad_q, attention_grad_kv), which
 * recompute the scores from q and k instead of reading an (s, t) matrix:
 *
 * <pre>
 * LSE:     lse[b,h,i] = log Σ_j e^(scale q_i·k_j + mask_ij)  (f32; −inf for a row that sees no key)
 *          args: q, k, [amask], lse, heads, seq_q, seq_k, q/k (b,h,s) strides, [amask's]
 * DELTA:   delta[b,h,i] = Σ dy_i∘o_i  (f32)          args: o, dy, delta, heads, seq_q, o/dy strides
 * GRAD_Q:  dq_i = scale Σ_j P_ij (dy_i·v_j − delta_i) k_j,   P = e^(scale q·kᵀ + mask − lse)
 * GRAD_KV: dk_j = scale Σ_h Σ_i P_ij (dy_i·v_j − delta_i) q_i,  dv_j = Σ_h Σ_i P_ij dy_i
 *          (out [2, b, hk, t, d]: dk then dv), the group's query heads in order
 *          args: q, k, v, dy, lse, delta, [amask], out, heads, seq_q, seq_k, q/k/v/dy strides, [amask's]
 * GRAD_KV_DS: GRAD_KV that also writes dS = P∘(dP − delta) (16-bit, as rounded for dK) of every
 *          tile it computes to a buffer, 64 × 64 a tile in the order DQ_DS's threads read it
 *          ({@link #dsTilesPerHead}); args: GRAD_KV's, then ds, plane (elements from dk's plane to dv's)
 * DQ_DS:   dq_i = scale Σ_j dS_ij k_j from those tiles: one product instead of GRAD_Q's three
 *          args: k, ds, out, heads, seq_q, seq_k, k's (b,h,s) strides
 * GRAD_KV_DQ: GRAD_KV_DS and DQ_DS in one launch, the tiles through a ring of slots
 *          ({@link AttentionBackwardRingRenderer}, {@link #ringBytes}); args: GRAD_KV_DS's, then dq_out,
 *          sync ({@link #ringFlags} ints, zero at launch)
 * </pre>
 *
 * q (b, heads, seq_q, d), k and v (b, heads / group, seq_k, d); head_dim contiguous in every
 * operand; the causal mask top-left (query i sees keys 0..i). Each output element is owned by
 * one warp that sums in a fixed order (no atomics): strict mode runs every kind.
 */
public record AttentionBackwardSpec(String name, Kind kind, long batch, long heads, int group, long seqQ, long seqK, int headDim,
                                    boolean causal, double scale, DType dtype, boolean masked) implements KernelSpec {
    public enum Kind { LSE, DELTA, GRAD_Q, GRAD_KV, GRAD_KV_DS, DQ_DS, GRAD_KV_DQ }

    /** Bytes of one 64 × 64 dS tile of 16-bit values. */
    public static final long DS_TILE_BYTES = 64 * 64 * 2;

    public AttentionBackwardSpec {
        KernelSpec.checkName(name);
        KernelSpec.checkPositive(batch, name + ": batch");
        KernelSpec.checkPositive(heads, name + ": heads");
        KernelSpec.checkPositive(group, name + ": group");
        KernelSpec.checkPositive(seqQ, name + ": seq_q");
        KernelSpec.checkPositive(seqK, name + ": seq_k");
        KernelSpec.checkPositive(headDim, name + ": head_dim");
        if (heads % group != 0) {
            throw new CodegenException(name + ": " + heads + " query heads do not split into groups of " + group + " (heads % group must be 0)");
        }
        if (headDim > 1024) {
            throw new CodegenException(name + ": head_dim " + headDim + " is over 1024");
        }
        if (!Double.isFinite(scale)) {
            throw new CodegenException(name + ": scale must be finite, got " + scale);
        }
    }

    /** The number of K/V heads. */
    public long kvHeads() {
        return heads / group;
    }

    /** Matrix FLOPs of the whole backward (q·kᵀ twice, dy·vᵀ, dS·k, dSᵀ·q, Pᵀ·dy): 10·b·h·s·t·d, halved when causal. */
    public double flops() {
        return 10.0 * batch * heads * seqQ * seqK * headDim * (causal ? 0.5 : 1.0);
    }

    /**
     * Whether {@code target} renders this spec with tensor cores ({@link AttentionBackwardMmaRenderer}):
     * bf16/f16, head_dim 64 or 128, mma.sync; DELTA (a row dot product) always takes the general kernel.
     * The system property {@code lantern.attention.backward.general=true} turns the fast path off.
     */
    public boolean fastPath(CudaTarget target) {
        return !Boolean.getBoolean("lantern.attention.backward.general") && AttentionBackwardMmaRenderer.supports(this, target);
    }

    /**
     * Whether {@code target} renders this spec with wgmma ({@link AttentionBackwardWgmmaRenderer}):
     * grad_q and grad_kv at head_dim 128, bf16/f16, without an additive mask, on a GPU with wgmma.
     * {@code lantern.attention.backward.wgmma=false} keeps the mma.sync kernels.
     */
    public boolean hopperPath(CudaTarget target) {
        return fastPath(target) && AttentionBackwardWgmmaRenderer.supports(this, target);
    }

    /**
     * Whether grad_q's dq is computed from the dS tiles grad_kv writes ({@link Kind#GRAD_KV_DS} then
     * {@link Kind#DQ_DS}, {@link AttentionDqFromDsRenderer}) instead of GRAD_Q's second pass over K and V:
     * the wgmma kernels' case ({@link #hopperPath}); {@code lantern.attention.backward.ds=false} keeps GRAD_Q.
     */
    public boolean dsPath(CudaTarget target) {
        return !"false".equals(System.getProperty("lantern.attention.backward.ds")) && new AttentionBackwardSpec(name, Kind.GRAD_KV, batch,
                heads, group, seqQ, seqK, headDim, causal, scale, dtype, masked).hopperPath(target);
    }

    /**
     * dS tiles of one (b, query head): 64-row query tiles × 64-key tiles, causal only those at or below
     * the diagonal (key tile ≤ query tile), row by row.
     */
    public static long dsTilesPerHead(long seqQ, long seqK, boolean causal) {
        long nq = (seqQ + 63) / 64;
        long nk = (seqK + 63) / 64;
        if (!causal) {
            return nq * nk;
        }
        return nq <= nk ? nq * (nq + 1) / 2 : nk * (nk + 1) / 2 + (nq - nk) * nk;
    }

    /** GRAD_KV_DQ's flags: one int for each of its CTAs that does work. */
    public long ringFlags() {
        return AttentionBackwardRingRenderer.syncInts(this);
    }

    /** Bytes of GRAD_KV_DQ's ring of dS tiles on {@code target}. */
    public long ringBytes(CudaTarget target) {
        return AttentionBackwardRingRenderer.ringBytes(this, target);
    }

    /**
     * Whether DELTA takes the 16-byte-load kernel ({@link AttentionDeltaRenderer}: bf16/f16, head_dim
     * a power of two from 8 to 256), whose rows must start 16-byte aligned.
     * {@code lantern.attention.backward.general=true} keeps the general kernel.
     */
    public boolean vectorDelta() {
        return !Boolean.getBoolean("lantern.attention.backward.general") && AttentionDeltaRenderer.supports(this);
    }

    @Override
    public CudaKernelSource render(CudaTarget target) {
        target.requireDtype(dtype, name);
        if (kind == Kind.GRAD_KV_DS || kind == Kind.DQ_DS || kind == Kind.GRAD_KV_DQ) {
            if (!dsPath(target)) {
                throw new CodegenException(name + ": " + kind + " runs on the wgmma kernels only (head_dim 128, bf16/f16, no mask, sm_90), got "
                        + this + " on " + target.arch());
            }
            return switch (kind) {
                case DQ_DS -> new AttentionDqFromDsRenderer(this, target).render();
                case GRAD_KV_DQ -> new AttentionBackwardRingRenderer(this, target).render();
                default -> new AttentionBackwardWgmmaRenderer(this, target).render();
            };
        }
        if (vectorDelta()) {
            return new AttentionDeltaRenderer(this).render();
        }
        if (!fastPath(target)) {
            return new AttentionBackwardGeneralRenderer(this).render();
        }
        return hopperPath(target) ? new AttentionBackwardWgmmaRenderer(this, target).render()
                : new AttentionBackwardMmaRenderer(this, target).render();
    }
}
