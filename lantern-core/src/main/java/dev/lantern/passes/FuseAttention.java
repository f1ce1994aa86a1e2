package dev.lantern.passes;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.TypeException;
import dev.lantern.ir.Verifier;
import dev.lantern.passes.Rule.Rewrite;

import java.util.List;

/**
 * fuse-attention: recognise scaled dot-product attention and make it one op, so the (b, h, s, t)
 * score matrix is never written. Algorithm (rules to a fixed point):
 * <pre>
 *   matmul(softmax(matmul(q, k) {transpose_b}) {causal, scale}, v)  ->  attention(q, k, v) {causal, scale}
 *   matmul(softmax(add(matmul(q, k) {transpose_b}, mask)) {causal, scale}, v)
 *                                                                   ->  attention(q, k, v, mul(mask, scale)) {causal, scale}
 *   attention(q, repeat(k), repeat(v))                              ->  attention(q, k, v)   (k, v with fewer heads)
 *   attention(rope(q), rope(k), v)                                  ->  attention(q, k, v) {rope=true, rope_base}
 *   permute(attention(q, k, v)) {perm}                              ->  attention(q, k, v) {out_perm=perm}
 * </pre>
 * Each absorbed value must have no other reader (it is not materialised any more). A repeat of
 * the K/V heads ({@link RepeatedHeads}: concat or gather of copies) is dropped, since attention
 * reads K/V head i / (h / hk) for query head i: the copies are never made, and a rope under the
 * repeat of k meets the attention directly. Bytes saved per
 * match: the scores and probabilities, 2 · b·h·s·t · dtype bytes written and read, which is always
 * positive, so there is no cost test. Runs before autocast so that the whole attention, and not its
 * pieces, is what autocast puts in bf16.
 */
public final class FuseAttention implements Pass {
    private final List<Rule> rules;

    /** All rules, masked attention included. */
    public FuseAttention() {
        this(true);
    }

    /** {@code masks}: whether an additive mask on the scores goes into the attention too (its 4th input). */
    public FuseAttention(boolean masks) {
        this.rules = List.of(attention(masks), REPEAT_KV, ROPE, PERMUTE);
    }

    /**
     * matmul(softmax(matmul(q, kᵀ) [+ mask]), v). softmax(scale·(s + mask)) is softmax(scale·s + scale·mask),
     * so a mask goes in multiplied by the softmax's scale (a mul on the small mask, none when scale is 1).
     */
    static Rule attention(boolean masks) {
        return Rule.of("attention", (n, cx) -> {
                if (n.op() != Op.MATMUL || hasTranspose(n)) {
                    return null;
                }
                Node p = cx.in(n, 0, Op.SOFTMAX);
                if (p == null || !cx.onlyUsedBy(p.name(), n)) {
                    return null;
                }
                Node s = cx.in(p, 0, Op.MATMUL);
                String mask = null;
                Node add = cx.in(p, 0, Op.ADD);
                if (s == null && masks && add != null && cx.onlyUsedBy(add.name(), p)) {
                    for (int side = 0; side < 2 && s == null; side++) {
                        Node m = cx.in(add, side, Op.MATMUL);
                        dev.lantern.ir.Shape ms = cx.type(add.input(1 - side)).shape();
                        // a mask over the keys (one value per key: a per-row constant would change nothing)
                        if (m != null && cx.onlyUsedBy(m.name(), add) && m.type().shape().equals(add.type().shape())
                                && ms.rank() == 4 && ms.dim(3) == m.type().shape().dim(3)) {
                            s = m;
                            mask = add.input(1 - side);
                        }
                    }
                }
                if (s == null || !cx.onlyUsedBy(s.name(), mask == null ? p : add) || !s.attrs().getBool("transpose_b", false)
                        || s.attrs().getBool("transpose_a", false)) {
                    return null;
                }
                double scale = p.attrs().getDouble("scale", 1.0);
                Attrs a = Attrs.of("causal", p.attrs().getBool("causal", false), "scale", scale);
                List<Node> extra = new java.util.ArrayList<>();
                if (mask != null && scale != 1.0) {
                    dev.lantern.ir.TensorType mt = cx.type(mask);
                    Node c = new Node(cx.fresh(), Op.CONSTANT, List.of(), Attrs.of("value", scale), dev.lantern.ir.TensorType.of(mt.dtype()));
                    Node scaled = new Node(cx.fresh(), Op.MUL, List.of(mask, c.name()), Attrs.of(), mt);
                    extra.add(c);
                    extra.add(scaled);
                    mask = scaled.name();
                }
                List<String> qkv = mask == null ? List.of(s.input(0), s.input(1), n.input(1)) : List.of(s.input(0), s.input(1), n.input(1), mask);
                try {
                    List<dev.lantern.ir.TensorType> types = new java.util.ArrayList<>();
                    for (String v : qkv) {
                        types.add(extra.isEmpty() || !v.equals(mask) ? cx.type(v) : extra.getLast().type());
                    }
                    extra.add(new Node(n.name(), Op.ATTENTION, qkv, a, Op.ATTENTION.infer(types, a)));
                    return Rewrite.to(extra);
                } catch (TypeException notAttentionShaped) {
                    return null; // e.g. rank-3 operands, broadcast batch dims, a mask of another rank or dtype: left as matmuls
                }
            });
    }

    static final Rule REPEAT_KV =
            Rule.of("repeat-kv-into-attention", (n, cx) -> {
                if (n.op() != Op.ATTENTION) {
                    return null;
                }
                String k = RepeatedHeads.source(cx, n.input(1), n);
                String v = RepeatedHeads.source(cx, n.input(2), n);
                if (k == null && v == null) {
                    return null;
                }
                List<String> in = new java.util.ArrayList<>(n.inputs());
                in.set(1, k == null ? n.input(1) : k);
                in.set(2, v == null ? n.input(2) : v);
                try {
                    return Rewrite.to(Build.named(cx, n.name(), Op.ATTENTION, n.attrs(), in));
                } catch (TypeException headsDiffer) {
                    return null; // only k or v repeated: k and v must have the same number of heads
                }
            });

    static final Rule ROPE =
            Rule.of("rope-into-attention", (n, cx) -> {
                if (n.op() != Op.ATTENTION || n.attrs().getBool("rope", false)) {
                    return null;
                }
                Node rq = cx.in(n, 0, Op.ROPE);
                Node rk = cx.in(n, 1, Op.ROPE);
                if (rq == null || rk == null || !cx.onlyUsedBy(rq.name(), n) || !cx.onlyUsedBy(rk.name(), n)
                        || rq.attrs().getInt("offset", 0) != 0 || rk.attrs().getInt("offset", 0) != 0
                        || rq.attrs().getBool("inverse", false) || rk.attrs().getBool("inverse", false) // attention ropes forward only
                        || rq.attrs().getDouble("base", 1e4) != rk.attrs().getDouble("base", 1e4)) {
                    return null;
                }
                Attrs a = n.attrs().with("rope", true).with("rope_base", rq.attrs().getDouble("base", 1e4));
                List<String> in = new java.util.ArrayList<>(n.inputs());
                in.set(0, rq.input(0));
                in.set(1, rk.input(0));
                return Rewrite.to(Build.named(cx, n.name(), Op.ATTENTION, a, in));
            });

    static final Rule PERMUTE =
            Rule.of("permute-into-attention", (n, cx) -> {
                Node att = n.op() == Op.PERMUTE ? cx.in(n, 0, Op.ATTENTION) : null;
                if (att == null || att.attrs().has("out_perm") || !cx.onlyUsedBy(att.name(), n)) {
                    return null;
                }
                Node fused = Build.named(cx, n.name(), Op.ATTENTION, att.attrs().with("out_perm", n.attrs().getInts("perm")), att.inputs());
                return Rewrite.to(fused);
            });

    @Override
    public String name() {
        return "fuse-attention";
    }

    @Override
    public String summary() {
        return "matmul(q,kᵀ) [+ mask] -> softmax(scale, causal) -> matmul(.,v) [+ K/V head repeats, + rope on q,k, + output permute] into one attention op";
    }

    @Override
    public Graph run(Graph g) {
        Verifier.verify(g, name());
        return RewriteEngine.run(name(), g, rules);
    }

    private static boolean hasTranspose(Node n) {
        return n.attrs().getBool("transpose_a", false) || n.attrs().getBool("transpose_b", false);
    }
}
