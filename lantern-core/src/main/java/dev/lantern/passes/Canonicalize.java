package dev.lantern.passes;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.ir.Verifier;
import dev.lantern.passes.Rule.Rewrite;

import java.util.List;
import java.util.stream.Stream;

/**
 * canonicalize: rewrite the graph into the one form the later passes match on. Algorithm: the rule
 * table below, applied to a fixed point by {@link RewriteEngine}, with dead code dropped after
 * every rewrite. Rules: transposes become permutes; identity reshapes, permutes, casts, x*1, x+0
 * vanish; reshape and permute chains merge into one; a permute that swaps the last two axes of a
 * matmul operand becomes the matmul's transpose flag; scalar constant expressions fold; identical
 * nodes merge (common subexpressions); a weight stored in bf16/f16 and widened by a cast is
 * converted at bind time, or, when only gathered, stays narrow ({@link StoredCasts}).
 */
public final class Canonicalize implements Pass {
    static final List<Rule> RULES = Stream.concat(Stream.of(
            Rule.of("transpose-to-permute", (n, cx) -> n.op() != Op.TRANSPOSE ? null : Rewrite.to(new Node(n.name(), Op.PERMUTE, n.inputs(),
                    Attrs.of("perm", Shape.transposePerm(n.type().shape().rank(), n.attrs().getInt("dim0", 0), n.attrs().getInt("dim1", 0))), n.type()))),
            Rule.of("identity-reshape", (n, cx) -> n.op() == Op.RESHAPE && cx.producer(n.input(0)).type().equals(n.type())
                    ? Rewrite.alias(n.input(0)) : null),
            Rule.of("identity-permute", (n, cx) -> n.op() == Op.PERMUTE && Build.isIdentity(n.attrs().getInts("perm"))
                    ? Rewrite.alias(n.input(0)) : null),
            Rule.of("identity-cast", (n, cx) -> n.op() == Op.CAST && cx.producer(n.input(0)).type().dtype() == n.type().dtype()
                    ? Rewrite.alias(n.input(0)) : null),
            Rule.of("mul-by-one", (n, cx) -> neutral(n, cx, Op.MUL, 1.0, true)),
            Rule.of("div-by-one", (n, cx) -> neutral(n, cx, Op.DIV, 1.0, false)),
            Rule.of("add-zero", (n, cx) -> neutral(n, cx, Op.ADD, 0.0, true)),
            Rule.of("sub-zero", (n, cx) -> neutral(n, cx, Op.SUB, 0.0, false)),
            Rule.of("reshape-of-reshape", (n, cx) -> {
                Node in = cx.in(n, 0, Op.RESHAPE);
                return n.op() == Op.RESHAPE && in != null && cx.producer(in.input(0)).type().layout().isContiguous()
                        ? Rewrite.to(n.withInputs(in.inputs())) : null;
            }),
            Rule.of("permute-of-permute", (n, cx) -> {
                Node in = cx.in(n, 0, Op.PERMUTE);
                if (n.op() != Op.PERMUTE || in == null) {
                    return null;
                }
                int[] outer = n.attrs().getInts("perm");
                int[] inner = in.attrs().getInts("perm");
                int[] composed = new int[outer.length];
                for (int i = 0; i < outer.length; i++) {
                    composed[i] = inner[outer[i]];
                }
                return Rewrite.to(new Node(n.name(), Op.PERMUTE, in.inputs(), Attrs.of("perm", composed), n.type().contiguous()));
            }),
            Rule.of("permute-into-matmul", (n, cx) -> {
                if (n.op() != Op.MATMUL) {
                    return null;
                }
                for (int side = 0; side < 2; side++) {
                    Node p = cx.in(n, side, Op.PERMUTE);
                    if (p != null && swapsLastTwo(p.attrs().getInts("perm"))) {
                        String flag = side == 0 ? "transpose_a" : "transpose_b";
                        List<String> ins = side == 0 ? List.of(p.input(0), n.input(1)) : List.of(n.input(0), p.input(0));
                        return Rewrite.to(new Node(n.name(), Op.MATMUL, ins, n.attrs().with(flag, !n.attrs().getBool(flag, false)), n.type()));
                    }
                }
                return null;
            }),
            Rule.of("fold-constants", Canonicalize::fold),
            Rule.of("common-subexpression", (n, cx) -> {
                if (n.op() == Op.INPUT || n.op() == Op.PARAM) {
                    return null;
                }
                Node m = cx.earlierTwin(n);
                return m == null ? null : Rewrite.alias(m.name());
            })), StoredCasts.RULES.stream()).toList();

    @Override
    public String name() {
        return "canonicalize";
    }

    @Override
    public String summary() {
        return "fold constants, drop identities, merge reshape/permute chains, merge duplicates, drop dead code";
    }

    @Override
    public Graph run(Graph g) {
        Verifier.verify(g, name());
        return RewriteEngine.run(name(), DeadCode.eliminate(g), RULES);
    }

    /** {@code x op c} (or {@code c op x} when commutative) with c the neutral scalar, and the result x's type: x. */
    private static Rewrite neutral(Node n, RewriteContext cx, Op op, double c, boolean commutative) {
        if (n.op() != op) {
            return null;
        }
        for (int side = 0; side < (commutative ? 2 : 1); side++) {
            Node x = cx.in(n, side);
            if (Build.isConstant(cx.in(n, 1 - side), c) && x.type().shape().equals(n.type().shape()) && x.type().dtype() == n.type().dtype()) {
                return Rewrite.alias(x.name());
            }
        }
        return null;
    }

    /** An elementwise op over scalar constants only becomes a constant (computed in double, as the reference does). */
    private static Rewrite fold(Node n, RewriteContext cx) {
        if (!n.op().isElementwise() || n.op() == Op.ELEMENTWISE_FUSED || n.type().shape().numel() != 1 || n.type().shape().rank() != 0
                || !n.type().dtype().isFloating()) {
            return null; // folding in double is right for floats; i32 and bool would first need their own rounding
        }
        double[] v = new double[n.inputs().size()];
        for (int i = 0; i < v.length; i++) {
            Node in = cx.in(n, i);
            if (!Build.isScalarConstant(in) || in.type().shape().rank() != 0) {
                return null;
            }
            v[i] = in.attrs().getDouble("value", Double.NaN);
        }
        double r = switch (n.op()) {
            case ADD -> v[0] + v[1];
            case SUB -> v[0] - v[1];
            case MUL -> v[0] * v[1];
            case DIV -> v[0] / v[1];
            case NEG -> -v[0];
            case EXP -> Math.exp(v[0]);
            case TANH -> Math.tanh(v[0]);
            default -> Double.NaN;
        };
        if (Double.isNaN(r)) {
            return null;
        }
        return Rewrite.to(new Node(n.name(), Op.CONSTANT, List.of(), Attrs.of("value", r), n.type()));
    }

    private static boolean swapsLastTwo(int[] perm) {
        int r = perm.length;
        if (r < 2 || perm[r - 1] != r - 2 || perm[r - 2] != r - 1) {
            return false;
        }
        for (int i = 0; i < r - 2; i++) {
            if (perm[i] != i) {
                return false;
            }
        }
        return true;
    }
}
