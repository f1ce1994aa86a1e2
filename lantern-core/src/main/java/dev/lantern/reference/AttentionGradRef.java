package dev.lantern.reference;

import dev.lantern.ir.Shape;

/**
 * float64 meaning of attention's backward ops (attention_lse, attention_grad_q, attention_grad_kv),
 * straight from their definitions with the whole (s, t) score matrix of one (batch, head) in hand:
 * S = scale·q·kᵀ + mask (causal: key j &gt; query i is absent), P = e^(S − lse), dP = dy·vᵀ,
 * D_i = Σ dy_i∘o_i, dS = P∘(dP − D); dq = scale·dS·k, dk = scale·dSᵀ·q, dv = Pᵀ·dy, k and v's
 * gradients summed over the query heads that read them (grouped-query attention).
 */
final class AttentionGradRef {
    private AttentionGradRef() {}

    /** The operands' sizes and the score of one (query head g, query i, key j). */
    private record Dims(RefTensor q, RefTensor k, RefTensor mask, double scale, boolean causal) {
        int b() { return q.shape().dim(0); }
        int h() { return q.shape().dim(1); }
        int hk() { return k.shape().dim(1); }
        int s() { return q.shape().dim(2); }
        int t() { return k.shape().dim(2); }
        int d() { return q.shape().dim(3); }

        /** (batch, K/V head) flat index of query (batch, head) g. */
        int kv(int g) {
            return g / h() * hk() + g % h() / (h() / hk());
        }

        int limit(int i) {
            return causal ? Math.min(t(), i + 1) : t();
        }

        double score(int g, int i, int j, long[] ms) {
            int d = d();
            double dot = 0;
            for (int c = 0; c < d; c++) {
                dot += q.data()[(g * s() + i) * d + c] * k.data()[(kv(g) * t() + j) * d + c];
            }
            double m = ms == null ? 0 : mask.data()[(int) (g / h() * ms[0] + g % h() * ms[1] + i * ms[2] + j * ms[3])];
            return scale * dot + m;
        }

        long[] maskStrides() {
            return mask == null ? null : RefOps.broadcastStrides(mask.shape(), Shape.of(b(), h(), s(), t()));
        }
    }

    static RefTensor lse(RefTensor q, RefTensor k, RefTensor mask, double scale, boolean causal) {
        Dims x = new Dims(q, k, mask, scale, causal);
        long[] ms = x.maskStrides();
        int bh = x.b() * x.h();
        double[] out = new double[bh * x.s()];
        for (int g = 0; g < bh; g++) {
            for (int i = 0; i < x.s(); i++) {
                double[] row = new double[x.limit(i)];
                double max = Double.NEGATIVE_INFINITY;
                for (int j = 0; j < row.length; j++) {
                    row[j] = x.score(g, i, j, ms);
                    max = Math.max(max, row[j]);
                }
                double sum = 0;
                for (double r : row) {
                    sum += max == Double.NEGATIVE_INFINITY ? 0 : Math.exp(r - max);
                }
                out[g * x.s() + i] = sum == 0 ? Double.NEGATIVE_INFINITY : max + Math.log(sum);
            }
        }
        return new RefTensor(Shape.of(x.b(), x.h(), x.s()), out);
    }

    /** dq ({@code kv=false}, q's shape) or dk;dv packed [2, b, hk, t, d] ({@code kv=true}). */
    static RefTensor grad(RefTensor q, RefTensor k, RefTensor v, RefTensor o, RefTensor dy, RefTensor lse,
                          RefTensor mask, double scale, boolean causal, boolean kv) {
        Dims x = new Dims(q, k, mask, scale, causal);
        long[] ms = x.maskStrides();
        int s = x.s();
        int t = x.t();
        int d = x.d();
        int e = v.shape().dim(3);
        int bh = x.b() * x.h();
        double[] dq = new double[bh * s * d];
        int kvSize = x.b() * x.hk() * t * d;
        double[] dkv = new double[kv ? 2 * kvSize : 0];
        for (int g = 0; g < bh; g++) {
            int kh = x.kv(g);
            for (int i = 0; i < s; i++) {
                double l = lse.data()[g * s + i];
                if (l == Double.NEGATIVE_INFINITY) {
                    continue; // a row that sees no key: P = 0
                }
                double dd = 0;
                for (int c = 0; c < e; c++) {
                    dd += dy.data()[(g * s + i) * e + c] * o.data()[(g * s + i) * e + c];
                }
                for (int j = 0; j < x.limit(i); j++) {
                    double p = Math.exp(x.score(g, i, j, ms) - l);
                    double dp = 0;
                    for (int c = 0; c < e; c++) {
                        dp += dy.data()[(g * s + i) * e + c] * v.data()[(kh * t + j) * e + c];
                    }
                    double ds = p * (dp - dd);
                    for (int c = 0; c < d; c++) {
                        if (kv) {
                            dkv[(kh * t + j) * d + c] += scale * ds * q.data()[(g * s + i) * d + c];
                        } else {
                            dq[(g * s + i) * d + c] += scale * ds * k.data()[(kh * t + j) * d + c];
                        }
                    }
                    for (int c = 0; kv && c < e; c++) {
                        dkv[kvSize + (kh * t + j) * e + c] += p * dy.data()[(g * s + i) * e + c];
                    }
                }
            }
        }
        return kv ? new RefTensor(Shape.of(2, x.b(), x.hk(), t, d), dkv) : new RefTensor(q.shape(), dq);
    }
}
