package dev.lantern.passes;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Verifier;
import dev.lantern.passes.Rule.Rewrite;

import java.util.ArrayList;
import java.util.List;

/**
 * recognize-gelu: GELU's tanh approximation written out (GPT-2's {@code gelu_new}) becomes the gelu
 * op, so that it fuses into the GEMM epilogue as {@code act="gelu_tanh"}. Rule:
 * <pre>
 *   0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x·x·x)))  ->  gelu(x) {approximate="tanh"}
 * </pre>
 * with the product's three factors in any grouping and order, either operand order of each add and
 * mul, and the constants one-element constants or params whose values are read (within 1e-6
 * relative: the f32 roundings of 0.5, √(2/π) and 0.044715). The erf form is caught by the ONNX
 * importer, since the IR has no erf. Intermediate values must be read inside the pattern alone.
 */
public final class RecognizeGelu implements Pass {
    private static final double SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);
    private static final double CUBIC = 0.044715;

    private final ConstantValues values;

    public RecognizeGelu(ConstantValues values) {
        this.values = values;
    }

    /** With only {@code constant} nodes known (what {@code lantern opt} on IR text has). */
    public RecognizeGelu() {
        this(ConstantValues.NONE);
    }

    @Override
    public String name() {
        return "recognize-gelu";
    }

    @Override
    public String summary() {
        return "0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) into gelu {approximate=tanh}";
    }

    @Override
    public Graph run(Graph g) {
        Verifier.verify(g, name());
        return RewriteEngine.run(name(), g, List.of(Rule.of("tanh-gelu", this::gelu)));
    }

    private Rewrite gelu(Node n, RewriteContext cx) {
        if (n.op() != Op.MUL) {
            return null;
        }
        List<Node> leaves = new ArrayList<>();
        factors(n, cx, leaves, 0);
        if (leaves.size() != 3) {
            return null;
        }
        Node half = null;
        Node onePlus = null;
        Node xn = null;
        for (Node l : leaves) {
            if (half == null && is(l, 0.5)) {
                half = l;
            } else if (onePlus == null && l.op() == Op.ADD && cx.users(l.name()).size() == 1 && !cx.isOutput(l.name())) {
                onePlus = l;
            } else {
                xn = l;
            }
        }
        String x = xn == null ? null : xn.name();
        if (half == null || onePlus == null) {
            return null;
        }
        if (x == null || !cx.type(x).equals(n.type()) || !isOnePlusTanh(onePlus, x, cx)) {
            return null;
        }
        return Rewrite.to(Build.named(cx, n.name(), Op.GELU, Attrs.of("approximate", "tanh"), List.of(x)));
    }

    /** The factors of a product: muls read only inside it are opened up (three levels at most). */
    private static void factors(Node m, RewriteContext cx, List<Node> out, int depth) {
        for (int i = 0; i < 2; i++) {
            Node f = cx.in(m, i);
            if (f.op() == Op.MUL && depth < 2 && cx.onlyUsedBy(f.name(), m)) {
                factors(f, cx, out, depth + 1);
            } else {
                out.add(f);
            }
        }
    }

    /** add(tanh(mul(add(x, mul(x·x·x, 0.044715)), √(2/π))), 1), every inner value read once. */
    private boolean isOnePlusTanh(Node p, String x, RewriteContext cx) {
        Node t = null;
        for (int i = 0; i < 2 && t == null; i++) {
            Node c = cx.in(p, i, Op.TANH);
            if (c != null && is(cx.in(p, 1 - i), 1.0) && cx.onlyUsedBy(c.name(), p)) {
                t = c;
            }
        }
        Node u = t == null ? null : cx.in(t, 0, Op.MUL);
        Node inner = u == null || !cx.onlyUsedBy(u.name(), t) ? null : operandWith(u, SQRT_2_OVER_PI, cx);
        if (inner == null || inner.op() != Op.ADD || !cx.onlyUsedBy(inner.name(), u)) {
            return false;
        }
        for (int i = 0; i < 2; i++) {
            Node b = cx.in(inner, 1 - i, Op.MUL);
            if (inner.input(i).equals(x) && b != null && cx.onlyUsedBy(b.name(), inner)) {
                Node cube = operandWith(b, CUBIC, cx);
                return cube != null && cx.onlyUsedBy(cube.name(), b) && isCube(cube, x, cx);
            }
        }
        return false;
    }

    /** mul(mul(x, x), x) or mul(x, mul(x, x)). */
    private static boolean isCube(Node c, String x, RewriteContext cx) {
        if (c.op() != Op.MUL) {
            return false;
        }
        for (int i = 0; i < 2; i++) {
            Node sq = cx.in(c, i, Op.MUL);
            if (c.input(1 - i).equals(x) && sq != null && cx.onlyUsedBy(sq.name(), c) && sq.input(0).equals(x) && sq.input(1).equals(x)) {
                return true;
            }
        }
        return false;
    }

    /** For mul(a, k) or mul(k, a) with k ≈ {@code v}: a's node. */
    private Node operandWith(Node m, double v, RewriteContext cx) {
        if (m.op() != Op.MUL) {
            return null;
        }
        for (int i = 0; i < 2; i++) {
            if (is(cx.in(m, 1 - i), v)) {
                return cx.in(m, i);
            }
        }
        return null;
    }

    private boolean is(Node n, double v) {
        Double got = values.scalar(n);
        return got != null && Math.abs(got - v) <= 1e-6 * Math.abs(v);
    }
}
