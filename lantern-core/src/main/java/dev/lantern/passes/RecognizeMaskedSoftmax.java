package dev.lantern.passes;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.ir.Verifier;
import dev.lantern.passes.Rule.Rewrite;

import java.util.List;
import java.util.function.DoublePredicate;

/**
 * recognize-masked-softmax: fold what exporters write around attention scores into the softmax's
 * own attributes, so that fuse-attention sees matmul -> softmax -> matmul. Rules, to a fixed point:
 * <pre>
 *   softmax(mul(x, c)) {scale=s}            ->  softmax(x) {scale=s·c}       c a one-element constant
 *   softmax(div(x, c)) {scale=s}            ->  softmax(x) {scale=s/c}
 *   softmax(add(x, M)) {causal=false, s}    ->  softmax(x) {causal=true, s}  M a causal mask
 *   softmax(add(mul(x, K), M)) {s}          ->  softmax(x) {causal=true, s}  K its 0/1 keep table
 *   matmul(q, permute(k) {p}) -> softmax    ->  matmul(q, permute(k) {p'}) {transpose_b}
 * </pre>
 * M is a constant whose every element is read and checked: its last two axes are (s, t) with
 * s = t (the square case, mask aligned to the diagonal, as the causal softmax masks key j > query
 * i), 0 where j ≤ i, and where j > i a value v with scale·v ≤ {@value #MASKED} (−inf included),
 * so that its weight exp(scale·v) is 0 in float64 as in the causal softmax; its leading axes
 * broadcast over the scores (batch, heads) without enlarging them. K, checked the same way, is 1 on
 * and below the diagonal and 0 above: the ONNX importer's form of {@code where(causal, scores,
 * fill)}, as GPT-2 exports from older transformers write the mask. Anything else — a mask shifted
 * by one, a padding mask, one computed at run time — is left as it is and runs op by op.
 *
 * <p>The last rule: GPT-2 and BERT exports take kᵀ as one permute of (b, t, h, d) to (b, h, d, t),
 * which canonicalize's permute-into-matmul (a swap of the last two axes only) does not take; as a
 * permute to (b, h, t, d) and the matmul's transpose flag it is what fuse-attention matches. It
 * is applied only to a score matmul (read by a softmax alone), where it changes no other GEMM.
 */
public final class RecognizeMaskedSoftmax implements Pass {
    /** The largest scaled mask value taken as "masked": exp of it is 0 even in float64. */
    static final double MASKED = -1e4;

    private final ConstantValues values;

    public RecognizeMaskedSoftmax(ConstantValues values) {
        this.values = values;
    }

    /** With only {@code constant} nodes known (what {@code lantern opt} on IR text has). */
    public RecognizeMaskedSoftmax() {
        this(ConstantValues.NONE);
    }

    List<Rule> rules() {
        return List.of(
                Rule.of("scale-into-softmax", this::scale),
                Rule.of("causal-mask-into-softmax", this::causalMask),
                Rule.of("key-permute-into-transpose-b", RecognizeMaskedSoftmax::keyPermute));
    }

    @Override
    public String name() {
        return "recognize-masked-softmax";
    }

    @Override
    public String summary() {
        return "softmax(x·c + causal mask) with a constant c and a checked causal mask into softmax {scale, causal}";
    }

    @Override
    public Graph run(Graph g) {
        Verifier.verify(g, name());
        return RewriteEngine.run(name(), g, rules());
    }

    private Rewrite scale(Node n, RewriteContext cx) {
        Node m = n.op() == Op.SOFTMAX ? cx.in(n, 0) : null;
        if (m == null || (m.op() != Op.MUL && m.op() != Op.DIV) || !cx.onlyUsedBy(m.name(), n)) {
            return null;
        }
        for (int side = 0; side < (m.op() == Op.MUL ? 2 : 1); side++) {
            Node x = cx.in(m, side);
            Double c = values.scalar(cx.in(m, 1 - side));
            if (c == null || !x.type().equals(m.type())) {
                continue;
            }
            double s = n.attrs().getDouble("scale", 1.0) * (m.op() == Op.MUL ? c : 1 / c);
            if (!Double.isFinite(s) || s == 0) {
                return null;
            }
            return Rewrite.to(new Node(n.name(), Op.SOFTMAX, List.of(x.name()), n.attrs().with("scale", s), n.type()));
        }
        return null;
    }

    private Rewrite causalMask(Node n, RewriteContext cx) {
        Node a = n.op() == Op.SOFTMAX && !n.attrs().getBool("causal", false) ? cx.in(n, 0, Op.ADD) : null;
        if (a == null || !cx.onlyUsedBy(a.name(), n)) {
            return null;
        }
        double scale = n.attrs().getDouble("scale", 1.0);
        if (scale <= 0) {
            return null;
        }
        for (int side = 0; side < 2; side++) {
            Node x = cx.in(a, side);
            Node mask = cx.in(a, 1 - side);
            if (x.type().equals(a.type()) && isCausal(mask, x.type().shape(), e -> e == 0, e -> scale * e <= MASKED)) {
                String scores = x.name();
                Node kept = x.op() == Op.MUL && cx.onlyUsedBy(x.name(), a) ? keptBy(x, cx) : null;
                if (kept != null) {
                    scores = kept.name(); // where(causal, scores, fill) as the importer writes it: scores·keep + fill
                }
                return Rewrite.to(new Node(n.name(), Op.SOFTMAX, List.of(scores), n.attrs().with("causal", true), n.type()));
            }
        }
        return null;
    }

    /** For mul(y, K) with K the causal keep table (1 on and below the diagonal, 0 above): y; else null. */
    private Node keptBy(Node m, RewriteContext cx) {
        for (int side = 0; side < 2; side++) {
            Node y = cx.in(m, side);
            if (y.type().equals(m.type()) && isCausal(cx.in(m, 1 - side), y.type().shape(), e -> e == 1, e -> e == 0)) {
                return y;
            }
        }
        return null;
    }

    /**
     * Whether {@code mask} is a causal table for {@code scores} (see the class comment): square, its every
     * element {@code kept} on and below the diagonal and {@code masked} above it.
     */
    private boolean isCausal(Node mask, Shape scores, DoublePredicate kept, DoublePredicate masked) {
        Shape m = mask.type().shape();
        int r = scores.rank();
        if (r < 2 || m.rank() < 2 || m.rank() > r) {
            return false;
        }
        int s = scores.dim(-2);
        if (s != scores.dim(-1) || m.dim(-2) != s || m.dim(-1) != s) {
            return false; // only the square case: queries and keys from position 0
        }
        ConstantValues.Table v = values.of(mask);
        if (v == null) {
            return false;
        }
        for (long i = 0; i < v.size(); i++) {
            long row = i / s % s;
            long col = i % s;
            double e = v.at(i);
            if (!(col <= row ? kept.test(e) : masked.test(e))) {
                return false;
            }
        }
        return true;
    }

    private static Rewrite keyPermute(Node n, RewriteContext cx) {
        if (n.op() != Op.MATMUL || n.attrs().getBool("transpose_b", false) || n.attrs().getBool("transpose_a", false)) {
            return null;
        }
        List<Node> users = cx.users(n.name());
        Node p = cx.in(n, 1, Op.PERMUTE);
        if (p == null || users.size() != 1 || users.getFirst().op() != Op.SOFTMAX || cx.isOutput(n.name())) {
            return null;
        }
        int[] perm = p.attrs().getInts("perm");
        int r = perm.length;
        if (r < 2 || perm[r - 1] == r - 1) {
            return null; // keeps the last axis in place: not a kᵀ (and an exact last-two swap is canonicalize's)
        }
        int[] swapped = perm.clone();
        swapped[r - 1] = perm[r - 2];
        swapped[r - 2] = perm[r - 1];
        Attrs t = n.attrs().with("transpose_b", true);
        if (Build.isIdentity(swapped)) {
            return Rewrite.to(Build.named(cx, n.name(), Op.MATMUL, t, List.of(n.input(0), p.input(0))));
        }
        Node k = Build.fresh(cx, Op.PERMUTE, Attrs.of("perm", swapped), p.inputs());
        Node m = new Node(n.name(), Op.MATMUL, List.of(n.input(0), k.name()), t, Op.MATMUL.infer(List.of(cx.type(n.input(0)), k.type()), t));
        return Rewrite.to(k, m);
    }
}
