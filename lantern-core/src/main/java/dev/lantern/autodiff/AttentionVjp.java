package dev.lantern.autodiff;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * attention, differentiated through its primitive meaning: the rule first emits the ops that
 * fusion folded into it (rope on q and k, q·kᵀ, the scaled and masked softmax, ·v, out_perm), then
 * runs the same reverse walk over them. Grouped-query heads need no repeat: q is viewed as
 * (b, hk, h/hk, s, d) against k and v as (b, hk, 1, t, d), and matmul's batch broadcasting (and its
 * rule's sum over the broadcast axis) does the rest. The builders emit these primitives anyway,
 * and the backward then fuses on its own. This route keeps the (s, t) scores and probabilities;
 * by default the rule takes {@link FlashAttentionVjp}'s (attention_lse, attention_grad_q,
 * attention_grad_kv: no scores kept) wherever it applies, and this one where it does not (a mask
 * that needs a gradient, v's head dim unlike k's) or when {@link Gradients.Options} turn it off.
 */
final class AttentionVjp {
    private AttentionVjp() {}

    static void register(Map<Op, VjpRule> t) {
        t.put(Op.ATTENTION, AttentionVjp::attention);
    }

    private static String[] attention(Node n, String dy, boolean[] need, GradientBuilder b) {
        if (b.flashAttention() && FlashAttentionVjp.applies(n, need, b)) {
            return FlashAttentionVjp.attention(n, dy, need, b);
        }
        int start = b.nodes().size();
        String out = primitive(n, b);
        List<Node> emitted = List.copyOf(b.nodes().subList(start, b.nodes().size()));
        Set<String> relevant = new HashSet<>();
        emitted.forEach(e -> relevant.add(e.name()));
        for (int i = 0; i < need.length; i++) {
            if (need[i]) {
                relevant.add(n.input(i));
            }
        }
        Backprop bp = new Backprop(b, relevant);
        bp.seed(out, dy);
        bp.run(emitted);
        String[] dx = new String[n.inputs().size()];
        for (int i = 0; i < dx.length; i++) {
            dx[i] = need[i] ? bp.gradient(n.input(i)) : null;
        }
        return dx;
    }

    /** The attention's value from primitive ops (CompositeRef's meaning); returns the last one. */
    private static String primitive(Node n, GradientBuilder b) {
        Attrs a = n.op().withDefaults(n.attrs());
        String q = n.input(0);
        String k = n.input(1);
        String v = n.input(2);
        if (a.getBool("rope", false)) {
            Attrs r = Attrs.of("base", a.getDouble("rope_base", 10000.0));
            q = b.op(Op.ROPE, r, q);
            k = b.op(Op.ROPE, r, k);
        }
        Shape qs = b.shape(q);
        Shape ks = b.shape(k);
        Shape vs = b.shape(v);
        int bat = qs.dim(0);
        int h = qs.dim(1);
        int hk = ks.dim(1);
        int s = qs.dim(2);
        int t = ks.dim(2);
        int e = vs.dim(3);
        boolean grouped = hk != h;
        if (grouped) {
            q = b.reshape(q, Shape.of(bat, hk, h / hk, s, qs.dim(3)));
            k = b.reshape(k, Shape.of(bat, hk, 1, t, ks.dim(3)));
            v = b.reshape(v, Shape.of(bat, hk, 1, t, e));
        }
        String scores = b.reshape(b.op(Op.MATMUL, Attrs.of("transpose_b", true), q, k), Shape.of(bat, h, s, t));
        boolean causal = a.getBool("causal", false);
        double scale = a.getDouble("scale", 1.0);
        String p;
        if (n.inputs().size() > 3) {
            // softmax(scale·qkᵀ + mask): the mask is added to the scaled scores
            String scaled = b.mul(scores, b.scalar(scale, b.type(scores).dtype()));
            p = b.op(Op.SOFTMAX, Attrs.of("causal", causal, "scale", 1.0), b.add(scaled, n.input(3)));
        } else {
            p = b.op(Op.SOFTMAX, Attrs.of("causal", causal, "scale", scale), scores);
        }
        if (grouped) {
            p = b.reshape(p, Shape.of(bat, hk, h / hk, s, t));
        }
        String o = b.reshape(b.op(Op.MATMUL, Attrs.EMPTY, p, v), Shape.of(bat, h, s, e));
        int[] perm = a.getInts("out_perm");
        return perm == null ? o : b.op(Op.PERMUTE, Attrs.of("perm", perm), o);
    }
}
