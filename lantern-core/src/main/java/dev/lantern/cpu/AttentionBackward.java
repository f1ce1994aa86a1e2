package dev.lantern.cpu;

import jdk.incubator.vector.FloatVector;

import java.util.Arrays;

import static dev.lantern.cpu.CpuConfig.F;

/**
 * attention's backward without the (S, T) scores, flash-style (the ops attention_lse,
 * attention_grad_q, attention_grad_kv): every kernel recomputes the scores of a (query, key)
 * block from q and k and the row log-sum-exp lse, P = e^(scale·q·kᵀ + mask − lse), so memory stays
 * O(block). q (B, H, S, D), k (B, HK, T, D), v (B, HK, T, E), o and dy (B, H, S, E), lse (B, H, S)
 * f32; query head i reads K/V head i / (H / HK); causal masks key j &gt; query i (top-left).
 *
 * <p>Deterministic by ownership: each task writes its own rows and sums in a fixed order. grad_q
 * takes one query block of one (batch, head) and walks the keys; grad_kv takes one key block of one
 * (batch, K/V head) and walks the query rows of every head of its group, head by head, so dk and
 * dv need no atomics and no cross-task reduction.
 */
public final class AttentionBackward {
    private AttentionBackward() {}

    static final int QB = Attention.QB;
    /** Key block; {@link Attention#scores} reads transposed blocks of this row length. */
    static final int KB = Attention.KB;

    private static final ThreadLocal<float[][]> SCRATCH = new ThreadLocal<>();

    /** out[b, h, i] = log Σ_j e^(scale·q_i·k_j + mask_ij) over the keys row i sees; −inf for a row that sees none. */
    public static void lse(View q, View k, View mask, View out, float scale, boolean causal) {
        Dims x = new Dims(q, k, k);
        int qBlocks = (x.s + QB - 1) / QB;
        Parallel.forEach(x.b * x.h * qBlocks, task -> {
            int qb = task % qBlocks;
            int head = task / qBlocks % x.h;
            int batch = task / qBlocks / x.h;
            lseBlock(q, k, mask, out, scale, causal, x, batch, head, qb * QB, Math.min(x.s, qb * QB + QB));
        });
    }

    /** dq (out: q's shape, contiguous) = scale·dS·k, dS = P∘(dy·vᵀ − rowsum(dy∘o)). */
    public static void gradQ(View q, View k, View v, View o, View dy, View lse, View mask, View out, float scale, boolean causal) {
        Dims x = new Dims(q, k, v);
        int qBlocks = (x.s + QB - 1) / QB;
        Parallel.forEach(x.b * x.h * qBlocks, task -> {
            int qb = task % qBlocks;
            int head = task / qBlocks % x.h;
            int batch = task / qBlocks / x.h;
            gradQBlock(q, k, v, o, dy, lse, mask, out, scale, causal, x, batch, head, qb * QB, Math.min(x.s, qb * QB + QB));
        });
    }

    /** out [2, B, HK, T, D]: dk = scale·dSᵀ·q (out[0]) and dv = Pᵀ·dy (out[1]), summed over the group's heads in order. */
    public static void gradKv(View q, View k, View v, View o, View dy, View lse, View mask, View out, float scale, boolean causal) {
        Dims x = new Dims(q, k, v);
        int kBlocks = (x.t + KB - 1) / KB;
        Parallel.forEach(x.b * x.hk * kBlocks, task -> {
            int kb = task % kBlocks;
            int kvHead = task / kBlocks % x.hk;
            int batch = task / kBlocks / x.hk;
            gradKvBlock(q, k, v, o, dy, lse, mask, out, scale, causal, x, batch, kvHead, kb * KB, Math.min(x.t, kb * KB + KB));
        });
    }

    /** The sizes: q (b, h, s, d), k (b, hk, t, d), v (b, hk, t, e); group = h / hk query heads per K/V head. */
    private record Dims(int b, int h, int hk, int s, int t, int d, int e, int group) {
        Dims(View q, View k, View v) {
            this(q.shape().dim(0), q.shape().dim(1), k.shape().dim(1), q.shape().dim(2), k.shape().dim(2),
                    q.shape().dim(3), v.shape().dim(3), q.shape().dim(1) / Math.max(1, k.shape().dim(1)));
        }
    }

    private static void lseBlock(View q, View k, View mask, View out, float scale, boolean causal, Dims x,
                                 int batch, int head, int q0, int q1) {
        float[][] sc = scratch(x);
        float[] qs = sc[0];   // (QB, d) scaled queries
        float[] kT = sc[1];   // (d, KB) the key block transposed
        float[] p = sc[2];    // (KB) one row's scores
        float[] m = sc[3];    // (QB) running max
        float[] l = sc[4];    // (QB) running sum of e^(s − m)
        int nq = q1 - q0;
        loadRows(q, batch, head, q0, nq, x.d, qs);
        Rows.affine(qs, 0f, scale, null, null, nq * x.d);
        Arrays.fill(m, 0, nq, Float.NEGATIVE_INFINITY);
        Arrays.fill(l, 0, nq, 0f);
        int kEnd = causal ? Math.min(x.t, q1) : x.t;
        for (int k0 = 0; k0 < kEnd; k0 += KB) {
            int nk = Math.min(KB, kEnd - k0);
            loadTransposed(k, batch, head / x.group, k0, nk, x.d, sc[5], kT);
            for (int i = 0; i < nq; i++) {
                int limit = causal ? Math.min(nk, q0 + i - k0 + 1) : nk;
                if (limit <= 0) {
                    continue;
                }
                Attention.scores(qs, i * x.d, kT, x.d, limit, p);
                if (mask != null) {
                    AttentionMask.addRow(mask, batch, head, q0 + i, k0, limit, p, 0);
                }
                float mNew = Math.max(m[i], Rows.max(p, limit));
                if (mNew == Float.NEGATIVE_INFINITY) {
                    continue; // every key so far masked out: nothing to add (and −inf − −inf is NaN)
                }
                l[i] = l[i] * VMath.exp(m[i] - mNew) + Attention.expShifted(p, limit, mNew);
                m[i] = mNew;
            }
        }
        long[] st = out.strides();
        for (int i = 0; i < nq; i++) {
            float r = l[i] == 0f ? Float.NEGATIVE_INFINITY : m[i] + (float) Math.log(l[i]);
            Convert.set(out.segment(), out.dtype(), out.offset() + batch * st[0] + head * st[1] + (q0 + i) * st[2], r);
        }
    }

    private static void gradQBlock(View q, View k, View v, View o, View dy, View lse, View mask, View out, float scale,
                                   boolean causal, Dims x, int batch, int head, int q0, int q1) {
        float[][] sc = scratch(x);
        float[] qs = sc[0];   // (QB, d) scaled queries
        float[] kT = sc[1];   // (d, KB)
        float[] p = sc[2];    // (KB) P of one row, then dS
        float[] lr = sc[3];   // (QB) lse
        float[] dd = sc[4];   // (QB) D = rowsum(dy∘o)
        float[] ks = sc[5];   // (KB, d) the key block as rows
        float[] vT = sc[6];   // (e, KB)
        float[] dys = sc[7];  // (QB, e)
        float[] acc = sc[8];  // (QB, d) Σ dS·k
        float[] dp = sc[9];   // (KB) dy·vᵀ of one row
        int nq = q1 - q0;
        int d = x.d;
        int e = x.e;
        int kvHead = head / x.group;
        loadRows(q, batch, head, q0, nq, d, qs);
        Rows.affine(qs, 0f, scale, null, null, nq * d);
        loadRows(dy, batch, head, q0, nq, e, dys);
        loadRows(o, batch, head, q0, nq, e, acc); // o rows only for D; acc is cleared right after
        for (int i = 0; i < nq; i++) {
            dd[i] = Rows.dot(dys, i * e, acc, i * e, e);
            lr[i] = lseAt(lse, batch, head, q0 + i);
        }
        Arrays.fill(acc, 0, nq * d, 0f);
        int kEnd = causal ? Math.min(x.t, q1) : x.t;
        for (int k0 = 0; k0 < kEnd; k0 += KB) {
            int nk = Math.min(KB, kEnd - k0);
            loadTransposed(k, batch, kvHead, k0, nk, d, ks, kT);
            loadTransposed(v, batch, kvHead, k0, nk, e, sc[10], vT);
            for (int i = 0; i < nq; i++) {
                int limit = causal ? Math.min(nk, q0 + i - k0 + 1) : nk;
                if (limit <= 0 || lr[i] == Float.NEGATIVE_INFINITY) {
                    continue;
                }
                probabilities(qs, i * d, kT, d, limit, mask, batch, head, q0 + i, k0, lr[i], p);
                Attention.scores(dys, i * e, vT, e, limit, dp);
                for (int j = 0; j < limit; j++) {
                    p[j] = p[j] * (dp[j] - dd[i]);
                }
                Attention.accumulate(acc, i * d, 1f, p, ks, limit, d);
            }
        }
        Rows.affine(acc, 0f, scale, null, null, nq * d);
        storeRows(acc, out, new int[] {batch, head}, q0, nq, d);
    }

    private static void gradKvBlock(View q, View k, View v, View o, View dy, View lse, View mask, View out, float scale,
                                    boolean causal, Dims x, int batch, int kvHead, int k0, int k1) {
        float[][] sc = scratch(x);
        float[] qs = sc[0];   // (d) one scaled query row
        float[] kT = sc[1];   // (d, KB)
        float[] p = sc[2];    // (KB) P of one row
        float[] ds = sc[3];   // (KB) dS of one row
        float[] orow = sc[4]; // (e) one output row
        float[] ks = sc[5];   // (KB, d) loaded rows, before the transpose
        float[] vT = sc[6];   // (e, KB)
        float[] dys = sc[7];  // (e) one dy row
        float[] dk = sc[8];   // (KB, d)
        float[] dp = sc[9];   // (KB)
        float[] dv = sc[11];  // (KB, e)
        int nk = k1 - k0;
        int d = x.d;
        int e = x.e;
        loadTransposed(k, batch, kvHead, k0, nk, d, ks, kT);
        loadTransposed(v, batch, kvHead, k0, nk, e, sc[10], vT);
        Arrays.fill(dk, 0, nk * d, 0f);
        Arrays.fill(dv, 0, nk * e, 0f);
        for (int head = kvHead * x.group; head < (kvHead + 1) * x.group; head++) {
            // causal: query rows before the block's first key see none of its keys
            for (int i = causal ? k0 : 0; i < x.s; i++) {
                int limit = causal ? Math.min(nk, i - k0 + 1) : nk;
                float l = lseAt(lse, batch, head, i);
                if (l == Float.NEGATIVE_INFINITY) {
                    continue;
                }
                loadRows(q, batch, head, i, 1, d, qs);
                Rows.affine(qs, 0f, scale, null, null, d);
                loadRows(dy, batch, head, i, 1, e, dys);
                loadRows(o, batch, head, i, 1, e, orow);
                float di = Rows.dot(dys, 0, orow, 0, e);
                probabilities(qs, 0, kT, d, limit, mask, batch, head, i, k0, l, p);
                Attention.scores(dys, 0, vT, e, limit, dp);
                for (int j = 0; j < limit; j++) {
                    ds[j] = p[j] * (dp[j] - di);
                    axpy(p[j], dys, dv, j * e, e);
                    axpy(ds[j], qs, dk, j * d, d); // qs carries the scale: dk = scale·dSᵀ·q
                }
            }
        }
        storeRows(dk, out, new int[] {0, batch, kvHead}, k0, nk, d);
        storeRows(dv, out, new int[] {1, batch, kvHead}, k0, nk, e);
    }

    /** p[j] = e^(scale·q·k_j + mask − lse) for j &lt; n; qs is pre-scaled. */
    private static void probabilities(float[] qs, int qo, float[] kT, int d, int n, View mask, int batch, int head, int row,
                                      int k0, float lse, float[] p) {
        Attention.scores(qs, qo, kT, d, n, p);
        if (mask != null) {
            AttentionMask.addRow(mask, batch, head, row, k0, n, p, 0);
        }
        Attention.expShifted(p, n, lse);
    }

    /** y[yo .. yo+n) += a·x[0 .. n). */
    private static void axpy(float a, float[] x, float[] y, int yo, int n) {
        int c = 0;
        if (CpuConfig.VECTOR) {
            for (int bound = F.loopBound(n); c < bound; c += F.length()) {
                FloatVector.broadcast(F, a).fma(FloatVector.fromArray(F, x, c), FloatVector.fromArray(F, y, yo + c)).intoArray(y, yo + c);
            }
        }
        for (; c < n; c++) {
            y[yo + c] += a * x[c];
        }
    }

    private static float lseAt(View lse, int batch, int head, int row) {
        long[] st = lse.strides();
        return Convert.get(lse.segment(), lse.dtype(), lse.offset() + batch * st[0] + head * st[1] + row * st[2]);
    }

    /** rows r0 .. r0+n of x[batch, head] (width w) into dst, row-major. */
    private static void loadRows(View x, int batch, int head, int r0, int n, int w, float[] dst) {
        long[] st = x.strides();
        for (int r = 0; r < n; r++) {
            Convert.load(x.segment(), x.dtype(), x.offset() + batch * st[0] + head * st[1] + (r0 + r) * st[2], st[3], dst, r * w, w);
        }
    }

    /** rows r0 .. r0+n of x[batch, head] (width w) into rows (n, w) and their transpose (w, KB). */
    private static void loadTransposed(View x, int batch, int head, int r0, int n, int w, float[] rows, float[] t) {
        loadRows(x, batch, head, r0, n, w, rows);
        for (int j = 0; j < n; j++) {
            for (int c = 0; c < w; c++) {
                t[c * KB + j] = rows[j * w + c];
            }
        }
    }

    /** rows (n, w) of src into out[lead..., r0 .. r0+n, :] (out contiguous). */
    private static void storeRows(float[] src, View out, int[] lead, int r0, int n, int w) {
        long[] st = out.strides();
        long base = out.offset();
        for (int i = 0; i < lead.length; i++) {
            base += lead[i] * st[i];
        }
        long rs = st[lead.length];
        for (int r = 0; r < n; r++) {
            Convert.store(src, r * w, out.segment(), out.dtype(), base + (r0 + r) * rs, st[lead.length + 1], w);
        }
    }

    private static float[][] scratch(Dims x) {
        float[][] s = SCRATCH.get();
        int need = Math.max(QB, KB) * Math.max(1, Math.max(x.d, x.e));
        if (s == null || s[0].length < need) {
            s = new float[12][need];
            SCRATCH.set(s);
        }
        return s;
    }
}
