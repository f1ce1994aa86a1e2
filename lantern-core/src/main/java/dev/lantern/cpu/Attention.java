package dev.lantern.cpu;

import jdk.incubator.vector.FloatVector;

import java.util.Arrays;

import static dev.lantern.cpu.CpuConfig.F;

/**
 * Fused attention, flash-style: out = softmax(scale·q·kᵀ [+ mask], causal)·v with q (B, H, S, D),
 * k (B, HK, T, D), v (B, HK, T, E), out (B, H, S, E); query head i reads K/V head i / (H / HK)
 * (grouped-query attention, read in place: no per-head copies of k and v). Never materialises the (S, T) scores: each
 * task takes a block of queries of one (batch, head), walks the keys in blocks, and keeps per
 * query a running max m, a running sum l and an unnormalised accumulator (online softmax):
 * m' = max(m, max_j s_j); acc = acc·e^(m−m') + Σ_j e^(s_j−m')·v_j; l = l·e^(m−m') + Σ_j e^(s_j−m').
 * Causal masks key j > query i (top-left aligned, as PyTorch's is_causal); whole key blocks past
 * the block's last query are skipped. Scores are computed against the key block transposed to
 * (d, KB), so that they vectorise over keys with no horizontal reductions.
 */
public final class Attention {
    private Attention() {}

    static final int QB = 32;
    static final int KB = 64;

    public static void run(View q, View k, View v, View out, float scale, boolean causal) {
        run(q, k, v, null, out, scale, causal);
    }

    /** As {@link #run(View, View, View, View, float, boolean)}, with an additive mask (null: none) on the scaled scores. */
    public static void run(View q, View k, View v, View mask, View out, float scale, boolean causal) {
        int b = q.shape().dim(0);
        int h = q.shape().dim(1);
        int s = q.shape().dim(2);
        int d = q.shape().dim(3);
        int t = k.shape().dim(2);
        int e = v.shape().dim(3);
        int group = h / Math.max(1, k.shape().dim(1)); // grouped-query attention: head reads K/V head head / group
        int qBlocks = (s + QB - 1) / QB;
        Parallel.forEach(b * h * qBlocks, task -> {
            int qb = task % qBlocks;
            int head = task / qBlocks % h;
            int batch = task / qBlocks / h;
            block(q, k, v, mask, out, scale, causal, batch, head, head / group, qb * QB, Math.min(s, qb * QB + QB), d, t, e);
        });
    }

    private static final ThreadLocal<float[][]> SCRATCH = new ThreadLocal<>();

    private static void block(View q, View k, View v, View mask, View out, float scale, boolean causal,
                              int batch, int head, int kvHead, int q0, int q1, int d, int t, int e) {
        int nq = q1 - q0;
        float[][] sc = scratch(d, e);
        float[] qs = sc[0];   // (QB, d), pre-multiplied by scale
        float[] ks = sc[1];   // (KB, d) rows as loaded
        float[] kT = sc[2];   // (d, KB) the same block transposed, so scores vectorise over keys
        float[] vs = sc[3];   // (KB, e)
        float[] acc = sc[4];  // (QB, e) unnormalised output rows
        float[] p = sc[5];    // (KB) scores, then probabilities
        float[] m = sc[6];    // (QB) running max
        float[] l = sc[7];    // (QB) running sum
        for (int i = 0; i < nq; i++) {
            Convert.load(q.segment(), q.dtype(), off(q, batch, head, q0 + i), q.strides()[3], qs, i * d, d);
        }
        Rows.affine(qs, 0f, scale, null, null, nq * d);
        Arrays.fill(acc, 0, nq * e, 0f);
        Arrays.fill(m, 0, nq, Float.NEGATIVE_INFINITY);
        Arrays.fill(l, 0, nq, 0f);
        int kEnd = causal ? Math.min(t, q1) : t;
        for (int k0 = 0; k0 < kEnd; k0 += KB) {
            int nk = Math.min(KB, kEnd - k0);
            for (int j = 0; j < nk; j++) {
                Convert.load(k.segment(), k.dtype(), off(k, batch, kvHead, k0 + j), k.strides()[3], ks, j * d, d);
                Convert.load(v.segment(), v.dtype(), off(v, batch, kvHead, k0 + j), v.strides()[3], vs, j * e, e);
            }
            for (int j = 0; j < nk; j++) {
                for (int c = 0; c < d; c++) {
                    kT[c * KB + j] = ks[j * d + c];
                }
            }
            for (int i = 0; i < nq; i++) {
                int limit = causal ? Math.min(nk, q0 + i - k0 + 1) : nk;
                if (limit <= 0) {
                    continue;
                }
                scores(qs, i * d, kT, d, limit, p);
                if (mask != null) {
                    AttentionMask.addRow(mask, batch, head, q0 + i, k0, limit, p, 0);
                }
                float mNew = Math.max(m[i], Rows.max(p, limit));
                float corr = VMath.exp(m[i] - mNew); // 0 on the first block (m = −inf)
                float sum = expShifted(p, limit, mNew);
                l[i] = l[i] * corr + sum;
                m[i] = mNew;
                accumulate(acc, i * e, corr, p, vs, limit, e);
            }
        }
        float[] row = p.length >= e ? p : new float[e];
        for (int i = 0; i < nq; i++) {
            float inv = 1f / l[i];
            for (int c = 0; c < e; c++) {
                row[c] = acc[i * e + c] * inv;
            }
            Convert.store(row, 0, out.segment(), out.dtype(), off(out, batch, head, q0 + i), out.strides()[3], e);
        }
    }

    /** s[j] = Σ_c q[qo + c]·kT[c·KB + j] for j < n: broadcasts of q against rows of kT, 4 vectors of keys at a time. */
    static void scores(float[] q, int qo, float[] kT, int d, int n, float[] s) {
        int w = F.length();
        int j = 0;
        if (CpuConfig.VECTOR) {
            for (; j + 4 * w <= n; j += 4 * w) {
                FloatVector a0 = FloatVector.zero(F);
                FloatVector a1 = a0;
                FloatVector a2 = a0;
                FloatVector a3 = a0;
                for (int c = 0; c < d; c++) {
                    FloatVector x = FloatVector.broadcast(F, q[qo + c]);
                    int r = c * KB + j;
                    a0 = x.fma(FloatVector.fromArray(F, kT, r), a0);
                    a1 = x.fma(FloatVector.fromArray(F, kT, r + w), a1);
                    a2 = x.fma(FloatVector.fromArray(F, kT, r + 2 * w), a2);
                    a3 = x.fma(FloatVector.fromArray(F, kT, r + 3 * w), a3);
                }
                a0.intoArray(s, j);
                a1.intoArray(s, j + w);
                a2.intoArray(s, j + 2 * w);
                a3.intoArray(s, j + 3 * w);
            }
            for (; j + w <= n; j += w) {
                FloatVector a0 = FloatVector.zero(F);
                for (int c = 0; c < d; c++) {
                    a0 = FloatVector.broadcast(F, q[qo + c]).fma(FloatVector.fromArray(F, kT, c * KB + j), a0);
                }
                a0.intoArray(s, j);
            }
        }
        for (; j < n; j++) {
            float a = 0;
            for (int c = 0; c < d; c++) {
                a += q[qo + c] * kT[c * KB + j];
            }
            s[j] = a;
        }
    }

    /**
     * acc[ao .. ao+e) = acc·corr + Σ_{j<n} p[j]·v[j, :]: the output row stays in registers, 4 vectors
     * of it at a time, while the probabilities stream past.
     */
    static void accumulate(float[] acc, int ao, float corr, float[] p, float[] v, int n, int e) {
        int w = F.length();
        int c = 0;
        if (CpuConfig.VECTOR) {
            for (; c + 4 * w <= e; c += 4 * w) {
                FloatVector a0 = FloatVector.fromArray(F, acc, ao + c).mul(corr);
                FloatVector a1 = FloatVector.fromArray(F, acc, ao + c + w).mul(corr);
                FloatVector a2 = FloatVector.fromArray(F, acc, ao + c + 2 * w).mul(corr);
                FloatVector a3 = FloatVector.fromArray(F, acc, ao + c + 3 * w).mul(corr);
                for (int j = 0; j < n; j++) {
                    FloatVector x = FloatVector.broadcast(F, p[j]);
                    int r = j * e + c;
                    a0 = x.fma(FloatVector.fromArray(F, v, r), a0);
                    a1 = x.fma(FloatVector.fromArray(F, v, r + w), a1);
                    a2 = x.fma(FloatVector.fromArray(F, v, r + 2 * w), a2);
                    a3 = x.fma(FloatVector.fromArray(F, v, r + 3 * w), a3);
                }
                a0.intoArray(acc, ao + c);
                a1.intoArray(acc, ao + c + w);
                a2.intoArray(acc, ao + c + 2 * w);
                a3.intoArray(acc, ao + c + 3 * w);
            }
            for (; c + w <= e; c += w) {
                FloatVector a0 = FloatVector.fromArray(F, acc, ao + c).mul(corr);
                for (int j = 0; j < n; j++) {
                    a0 = FloatVector.broadcast(F, p[j]).fma(FloatVector.fromArray(F, v, j * e + c), a0);
                }
                a0.intoArray(acc, ao + c);
            }
        }
        for (; c < e; c++) {
            float a = acc[ao + c] * corr;
            for (int j = 0; j < n; j++) {
                a += p[j] * v[j * e + c];
            }
            acc[ao + c] = a;
        }
    }

    /** p[j] = e^(p[j] − max) for j < n; returns Σ p[j]. */
    static float expShifted(float[] p, int n, float max) {
        int j = 0;
        float sum = 0;
        if (CpuConfig.VECTOR) {
            FloatVector total = FloatVector.zero(F);
            for (int bound = F.loopBound(n); j < bound; j += F.length()) {
                FloatVector x = VMath.exp(FloatVector.fromArray(F, p, j).sub(max));
                x.intoArray(p, j);
                total = total.add(x);
            }
            sum = Rows.hsum(total);
        }
        for (; j < n; j++) {
            p[j] = VMath.exp(p[j] - max);
            sum += p[j];
        }
        return sum;
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
