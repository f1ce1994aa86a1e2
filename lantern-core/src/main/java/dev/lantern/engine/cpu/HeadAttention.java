package dev.lantern.engine.cpu;

import dev.lantern.cpu.Gemm;
import dev.lantern.cpu.GemmEpilogue;
import dev.lantern.cpu.Parallel;
import dev.lantern.cpu.View;
import dev.lantern.ir.DType;

import java.lang.foreign.MemorySegment;

/**
 * Attention as two GEMMs per (batch, head), for score blocks that fit a thread's memory
 * (s·t ≤ {@link dev.lantern.kernel.KernelLowering#ATTENTION_SCORE_LIMIT}): one task per (batch, head) computes S = scale·q·kᵀ into a
 * thread-local (s, t) block with the backend's GEMM (run inline: tasks do not nest parallelism),
 * masks and normalises each row in place (softmax in f32), and writes P·v straight into the
 * output view, which may be permuted ({@code out_perm}). RoPE (rotate-half, as {@code rope}) is
 * applied while q and k are copied into thread-local f32 panels, so a roped attention needs no
 * scratch in the arena. The (s, t) block never reaches the arena: on a CPU it stays in L2 for the
 * block sizes Lantern benchmarks, which is what a flash kernel buys on a GPU.
 */
public final class HeadAttention {
    private HeadAttention() {}

    private static final ThreadLocal<float[][]> SCRATCH = ThreadLocal.withInitial(() -> new float[3][0]);

    /** q (B, H, S, D), k (B, HK, T, D), v (B, HK, T, E) (H % HK == 0: head i reads K/V head i / (H / HK)), out (B, H, S, E) as views; cos/sin tables (max(S,T), D/2) or null. */
    public static void run(View q, View k, View v, View out, float scale, boolean causal, float[] cos, float[] sin) {
        run(q, k, v, null, out, scale, causal, cos, sin);
    }

    /** As {@link #run(View, View, View, View, float, boolean, float[], float[])}, with an additive mask (null: none) on the scaled scores. */
    public static void run(View q, View k, View v, View mask, View out, float scale, boolean causal, float[] cos, float[] sin) {
        int b = q.shape().dim(0);
        int h = q.shape().dim(1);
        int s = q.shape().dim(2);
        int d = q.shape().dim(3);
        int t = k.shape().dim(2);
        int e = v.shape().dim(3);
        int group = h / Math.max(1, k.shape().dim(1)); // grouped-query attention: head reads K/V head head / group
        Parallel.forEach(b * h, task -> {
            int batch = task / h;
            int head = task % h;
            int kvHead = head / group;
            float[][] sc = scratch((long) s * t, (long) s * d, (long) t * d);
            Gemm.Matrix qm = cos == null ? matrix(q, batch, head) : roped(q, batch, head, sc[1], cos, sin);
            Gemm.Matrix km = cos == null ? matrix(k, batch, kvHead) : roped(k, batch, kvHead, sc[2], cos, sin);
            MemorySegment scores = MemorySegment.ofArray(sc[0]);
            Gemm.Matrix sm = Gemm.Matrix.rowMajor(scores, DType.F32, 0, t);
            Gemm.run(qm, km.t(), sm, s, t, d, GemmEpilogue.NONE.withAlpha(scale));
            for (int i = 0; i < s; i++) {
                int valid = causal ? Math.min(t, i + 1) : t;
                if (mask != null) {
                    dev.lantern.cpu.AttentionMask.addRow(mask, batch, head, i, 0, valid, sc[0], i * t);
                }
                softmaxRow(sc[0], i * t, valid, t);
            }
            Gemm.run(sm, matrix(v, batch, kvHead), matrix(out, batch, head), s, e, t, GemmEpilogue.NONE);
        });
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

    /** The (rows, cols) matrix of one (batch, head) of a 4-d view. */
    private static Gemm.Matrix matrix(View x, int batch, int head) {
        long[] st = x.strides();
        return new Gemm.Matrix(x.segment(), x.dtype(), x.offset() + batch * st[0] + head * st[1], st[2], st[3]);
    }

    /** One (batch, head) of x rotated into {@code dst} (rows, d) f32: out[i] = x[i]·cos − x[i+d/2]·sin, out[i+d/2] = x[i+d/2]·cos + x[i]·sin. */
    private static Gemm.Matrix roped(View x, int batch, int head, float[] dst, float[] cos, float[] sin) {
        int rows = x.shape().dim(2);
        int d = x.shape().dim(3);
        int half = d / 2;
        long[] st = x.strides();
        long base = x.offset() + batch * st[0] + head * st[1];
        float[] row = new float[d];
        for (int p = 0; p < rows; p++) {
            for (int c = 0; c < d; c++) {
                row[c] = dev.lantern.cpu.Convert.get(x.segment(), x.dtype(), base + p * st[2] + c * st[3]);
            }
            int o = p * d;
            int tb = p * half;
            for (int i = 0; i < half; i++) {
                float a = row[i];
                float bb = row[i + half];
                dst[o + i] = a * cos[tb + i] - bb * sin[tb + i];
                dst[o + i + half] = bb * cos[tb + i] + a * sin[tb + i];
            }
        }
        return Gemm.Matrix.rowMajor(MemorySegment.ofArray(dst), DType.F32, 0, d);
    }

    /**
     * Row [off, off+n) of the scores: softmax over the first {@code valid} entries, zeros after (the
     * causal mask). NOTE: through {@link dev.lantern.cpu.Softmax#softmaxRow}, not
     * {@code lanewise(EXP)} and {@code reduceLanes(ADD)}: those gave bits that changed with the JIT
     * tier (SVML in C2, Math.exp per lane before it; the lane sum's order unspecified), so a cold
     * and a warm forward of the same graph differed (docs/determinism.md).
     */
    private static void softmaxRow(float[] a, int off, int valid, int n) {
        dev.lantern.cpu.Softmax.softmaxRow(a, off, valid, 1f);
        java.util.Arrays.fill(a, off + valid, off + n, 0f);
    }

    private static float[][] scratch(long scores, long q, long k) {
        float[][] s = SCRATCH.get();
        long[] need = {scores, q, k};
        for (int i = 0; i < 3; i++) {
            if (s[i].length < need[i]) {
                s[i] = new float[Math.toIntExact(need[i])];
            }
        }
        return s;
    }
}
