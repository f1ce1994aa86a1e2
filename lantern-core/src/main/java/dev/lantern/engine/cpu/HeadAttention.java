package dev.lantern.engine.cpu;

import dev.lantern.cpu.HeadAttentionKernel;
import dev.lantern.cpu.Parallel;
import dev.lantern.cpu.View;

/**
 * Attention as two GEMMs per (batch, head), for score blocks that fit a thread's memory
 * (s·t ≤ {@link dev.lantern.kernel.KernelLowering#ATTENTION_SCORE_LIMIT}): one task per (batch, head)
 * runs {@link HeadAttentionKernel}, which computes S = q·kᵀ into a thread-local (s, t) block on the
 * GEMM's micro-kernel, masks and normalises each row in place (softmax in f32, scale folded in), and
 * writes P·v straight into the output view, which may be permuted ({@code out_perm}). RoPE
 * (rotate-half, as {@code rope}) is applied while q and k are copied into thread-local f32 panels,
 * so a roped attention needs no scratch in the arena. The (s, t) block never reaches the arena: on a
 * CPU it stays in L2 for the block sizes Lantern benchmarks, which is what a flash kernel buys on a GPU.
 *
 * <p>NOTE (2026-12-02): each head used to run two {@link dev.lantern.cpu.Gemm#run} calls on heap
 * segments, after a scalar rope copy, with both products over the whole (s, t) block under a causal
 * mask; {@link HeadAttentionKernel} says what changed and the commit gives the figures.
 */
public final class HeadAttention {
    private HeadAttention() {}

    /** q (B, H, S, D), k (B, HK, T, D), v (B, HK, T, E) (H % HK == 0: head i reads K/V head i / (H / HK)), out (B, H, S, E) as views; cos/sin tables (max(S,T), D/2) or null. */
    public static void run(View q, View k, View v, View out, float scale, boolean causal, float[] cos, float[] sin) {
        run(q, k, v, null, out, scale, causal, cos, sin);
    }

    /** As {@link #run(View, View, View, View, float, boolean, float[], float[])}, with an additive mask (null: none) on the scaled scores. */
    public static void run(View q, View k, View v, View mask, View out, float scale, boolean causal, float[] cos, float[] sin) {
        int b = q.shape().dim(0);
        int h = q.shape().dim(1);
        int group = h / Math.max(1, k.shape().dim(1)); // grouped-query attention: head reads K/V head head / group
        Parallel.forEach(b * h, task -> HeadAttentionKernel.run(q, k, v, mask, out, task / h, task % h, task % h / group,
                scale, causal, cos, sin));
    }

    /** cos/sin of pos·base^(−2i/d) for pos < rows, i < d/2, computed in double as the reference does. */
    public static float[][] ropeTables(int rows, int d, double base) {
        int half = d / 2;
        float[] cos = new float[rows * half];
        float[] sin = new float[rows * half];
        for (int p = 0; p < rows; p++) {
            for (int i = 0; i < half; i++) {
                double angle = p * Math.pow(base, -2.0 * i / d);
                cos[p * half + i] = (float) Math.cos(angle);
                sin[p * half + i] = (float) Math.sin(angle);
            }
        }
        return new float[][] {cos, sin};
    }
}
