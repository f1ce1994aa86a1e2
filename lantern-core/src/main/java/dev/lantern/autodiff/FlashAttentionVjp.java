package dev.lantern.autodiff;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;

/**
 * attention's gradient as the flash backward ops, which never keep the (s, t) scores:
 * <pre>
 *   q', k'  = rope(q), rope(k)                         (rope=true: explicit, then its inverse on dq', dk')
 *   o', dy' = permute(o, dy) by out_perm's inverse     (views back to (b, h, s, e))
 *   lse     = attention_lse(q', k' [, mask])           one q·kᵀ pass, f32 (b, h, s)
 *   dq'     = attention_grad_q(q', k', v, o', dy', lse [, mask])
 *   dk';dv  = attention_grad_kv(...)  -> [2, b, hk, t, d], sliced (dk = [0], dv = [1])
 * </pre>
 * Applies when v's head dim equals k's (the packed dk;dv) and the mask needs no gradient; otherwise
 * {@link AttentionVjp} differentiates the primitive form (matmul, softmax, matmul), which keeps the
 * scores but covers every case.
 */
final class FlashAttentionVjp {
    private FlashAttentionVjp() {}

    /** Whether this route computes {@code n}'s gradient for {@code need}. */
    static boolean applies(Node n, boolean[] need, GradientBuilder b) {
        boolean maskGradient = n.inputs().size() > 3 && need[3];
        return !maskGradient && b.shape(n.input(2)).dim(3) == b.shape(n.input(1)).dim(3);
    }

    static String[] attention(Node n, String dy, boolean[] need, GradientBuilder b) {
        Attrs a = n.op().withDefaults(n.attrs());
        String q = n.input(0);
        String k = n.input(1);
        String v = n.input(2);
        boolean rope = a.getBool("rope", false);
        Attrs r = Attrs.of("base", a.getDouble("rope_base", 10000.0));
        if (rope) {
            q = b.op(Op.ROPE, r, q);
            k = b.op(Op.ROPE, r, k);
        }
        String o = n.name();
        String g = dy;
        int[] perm = a.getInts("out_perm");
        if (perm != null) {
            int[] inv = new int[perm.length];
            for (int i = 0; i < perm.length; i++) {
                inv[perm[i]] = i;
            }
            o = b.op(Op.PERMUTE, Attrs.of("perm", inv), o);
            g = b.op(Op.PERMUTE, Attrs.of("perm", inv), g);
        }
        Attrs ca = Attrs.of("causal", a.getBool("causal", false), "scale", a.getDouble("scale", 1.0));
        String mask = n.inputs().size() > 3 ? n.input(3) : null;
        String lse = mask == null ? b.op(Op.ATTENTION_LSE, ca, q, k) : b.op(Op.ATTENTION_LSE, ca, q, k, mask);
        String[] operands = mask == null ? new String[] {q, k, v, o, g, lse} : new String[] {q, k, v, o, g, lse, mask};
        String[] dx = new String[n.inputs().size()];
        // grad_kv straight after grad_q, before dq's inverse rope reads it: on CUDA the two then run as one
        // kernel (dq deferred to grad_kv's launch, which nothing in between may read)
        String dq = need[0] ? b.op(Op.ATTENTION_GRAD_Q, ca, operands) : null;
        String dkv = need[1] || need[2] ? b.op(Op.ATTENTION_GRAD_KV, ca, operands) : null;
        if (dq != null) {
            dx[0] = rope ? b.op(Op.ROPE, r.with("inverse", true), dq) : dq;
        }
        if (dkv != null) {
            Shape ks = b.shape(n.input(1));
            if (need[1]) {
                String dk = b.reshape(b.op(Op.SLICE, Attrs.of("axis", 0, "start", 0, "end", 1), dkv), ks);
                dx[1] = rope ? b.op(Op.ROPE, r.with("inverse", true), dk) : dk;
            }
            if (need[2]) {
                dx[2] = b.reshape(b.op(Op.SLICE, Attrs.of("axis", 0, "start", 1, "end", 2), dkv), b.shape(v));
            }
        }
        return dx;
    }
}
