package dev.lantern.cpu;

import java.util.Arrays;

/**
 * Fused attention, flash-style: out = softmax(scale·q·kᵀ, causal)·v with q (B, H, S, D),
 * k (B, H, T, D), v (B, H, T, E), out (B, H, S, E). Never materialises the (S, T) scores: each
 * task takes a block of queries of one (batch, head), walks the keys in blocks, and keeps per
 * query a running max m, a running sum l and an unnormalised accumulator (online softmax):
 * m' = max(m, max_j s_j); acc = acc·e^(m−m') + Σ_j e^(s_j−m')·v_j; l = l·e^(m−m') + Σ_j e^(s_j−m').
 * Causal masks key j > query i (top-left aligned, as PyTorch's is_causal); whole key blocks past
 * the block's last query are skipped.
 */
public final class Attention {
    private Attention() {}

    static final int QB = 32;
    static final int KB = 64;

    public static void run(View q, View k, View v, View out, float scale, boolean causal) {
        int b = q.shape().dim(0);
        int h = q.shape().dim(1);
        int s = q.shape().dim(2);
        int d = q.shape().dim(3);
        int t = k.shape().dim(2);
        int e = v.shape().dim(3);
        int qBlocks = (s + QB - 1) / QB;
        Parallel.forEach(b * h * qBlocks, task -> {
            int qb = task % qBlocks;
            int head = task / qBlocks % h;
            int batch = task / qBlocks / h;
            block(q, k, v, out, scale, causal, batch, head, qb * QB, Math.min(s, qb * QB + QB), d, t, e);
        });
    }

    private static final ThreadLocal<float[][]> SCRATCH = new ThreadLocal<>();

    private static void block(View q, View k, View v, View out, float scale, boolean causal,
                              int batch, int head, int q0, int q1, int d, int t, int e) {
        int nq = q1 - q0;
        float[][] sc = scratch(d, e);
        float[] qs = sc[0];   // (QB, d)
        float[] ks = sc[1];   // (KB, d)
        float[] vs = sc[2];   // (KB, e)
        float[] acc = sc[3];  // (QB, e)
        float[] p = sc[4];    // (KB)
        float[] m = sc[5];    // (QB)
        float[] l = sc[6];    // (QB)
        for (int i = 0; i < nq; i++) {
            Convert.load(q.segment(), q.dtype(), off(q, batch, head, q0 + i), q.strides()[3], qs, i * d, d);
        }
        Arrays.fill(acc, 0, nq * e, 0f);
        Arrays.fill(m, 0, nq, Float.NEGATIVE_INFINITY);
        Arrays.fill(l, 0, nq, 0f);
        int kEnd = causal ? Math.min(t, q1) : t;
        for (int k0 = 0; k0 < kEnd; k0 += KB) {
            int nk = Math.min(KB, kEnd - k0);
            for (int j = 0; j < nk; j++) {
                Convert.load(k.segment(), k.dtype(), off(k, batch, head, k0 + j), k.strides()[3], ks, j * d, d);
                Convert.load(v.segment(), v.dtype(), off(v, batch, head, k0 + j), v.strides()[3], vs, j * e, e);
            }
            for (int i = 0; i < nq; i++) {
                int limit = causal ? Math.min(nk, q0 + i - k0 + 1) : nk;
                if (limit <= 0) {
                    continue;
                }
                float blockMax = Float.NEGATIVE_INFINITY;
                for (int j = 0; j < limit; j++) {
                    p[j] = scale * Rows.dot(qs, i * d, ks, j * d, d);
                    blockMax = Math.max(blockMax, p[j]);
                }
                float mNew = Math.max(m[i], blockMax);
                float corr = (float) Math.exp(m[i] - mNew); // 0 on the first block (m = −inf)
                float sum = 0;
                for (int j = 0; j < limit; j++) {
                    p[j] = (float) Math.exp(p[j] - mNew);
                    sum += p[j];
                }
                l[i] = l[i] * corr + sum;
                m[i] = mNew;
                Rows.axpby(0f, acc, i * e, corr, acc, i * e, e);
                for (int j = 0; j < limit; j++) {
                    Rows.axpby(p[j], vs, j * e, 1f, acc, i * e, e);
                }
            }
        }
        float[] row = sc[7];
        for (int i = 0; i < nq; i++) {
            float inv = 1f / l[i];
            for (int c = 0; c < e; c++) {
                row[c] = acc[i * e + c] * inv;
            }
            Convert.store(row, 0, out.segment(), out.dtype(), off(out, batch, head, q0 + i), out.strides()[3], e);
        }
    }

    private static long off(View x, int batch, int head, int row) {
        long[] st = x.strides();
        return x.offset() + batch * st[0] + head * st[1] + row * st[2];
    }

    private static float[][] scratch(int d, int e) {
        float[][] s = SCRATCH.get();
        int need = Math.max(QB, KB) * Math.max(d, e);
        if (s == null || s[0].length < need) {
            s = new float[8][need];
            SCRATCH.set(s);
        }
        return s;
    }
}
