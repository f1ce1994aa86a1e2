package dev.lantern.passes;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.ElementwiseExpr;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Verifier;
import dev.lantern.passes.Rule.Rewrite;

import java.util.ArrayList;
import java.util.List;

/**
 * fuse-elementwise: merge chains of elementwise ops into one {@code elementwise} op whose
 * {@code expr} is evaluated in registers, one pass over memory. Algorithm (rules to a fixed point):
 * <pre>
 *   f(.., g(a, b), ..)  -> elementwise(.., a, b, ..) {expr="f(.., g($i, $j), ..)"}
 *       when g is elementwise, has no other reader (in the graph and in f's expression) and has f's
 *       shape (so nothing is recomputed, not even under broadcast),
 *       and g does not round to bf16/f16 (a narrowing cast stays at an expression's root, the store)
 *   elementwise(.., c, ..) -> expr with c inlined   (c a scalar constant)
 * </pre>
 * A merge that would make an expression of more than {@link #MAX_CALLS} ops is not made.
 * Bytes saved per merge: the intermediate written once and read once, 2·|g|; there is no
 * recompute, so every match saves. Runs after the GEMM and norm fusions so that epilogues and
 * prologues take their elementwise neighbours first; what is left here has no better home.
 */
public final class FuseElementwise implements Pass {
    /**
     * The most primitive ops one fused expression takes. A chain longer than this becomes several
     * fused ops, each one pass over memory: past a few dozen ops a kernel is compute-bound anyway,
     * and the bound keeps each merge O(1) (so fusing a chain of n ops O(n)) and every expression
     * far inside {@link ElementwiseExpr#MAX_DEPTH}.
     */
    static final int MAX_CALLS = 64;

    static final List<Rule> RULES = List.of(
            Rule.of("elementwise-chain", (n, cx) -> {
                if (!fusible(n)) {
                    return null;
                }
                ElementwiseExpr self = null;
                for (int i = 0; i < n.inputs().size(); i++) {
                    Node p = cx.in(n, i);
                    if (fusible(p) && cx.onlyUsedBy(p.name(), n) && p.type().shape().equals(n.type().shape())) {
                        self = self == null ? expr(n) : self;
                        ElementwiseExpr pe = expr(p);
                        if (!narrows(pe) && uses(self, i) == 1 && self.calls() + pe.calls() <= MAX_CALLS) {
                            return Rewrite.to(merge(n, i, p, cx));
                        }
                    }
                }
                return null;
            }),
            Rule.of("inline-scalar-constant", (n, cx) -> {
                if (n.op() != Op.ELEMENTWISE_FUSED || n.inputs().size() < 2) {
                    return null;
                }
                for (int i = 0; i < n.inputs().size(); i++) {
                    Node c = cx.in(n, i);
                    if (Build.isScalarConstant(c) && c.type().shape().rank() == 0 && c.type().dtype() == n.type().dtype()) {
                        List<String> ins = new ArrayList<>(n.inputs());
                        ins.remove(i);
                        List<ElementwiseExpr> map = new ArrayList<>();
                        for (int j = 0, k = 0; j < n.inputs().size(); j++) {
                            map.add(j == i ? new ElementwiseExpr.Const(c.attrs().getDouble("value", 0)) : new ElementwiseExpr.In(k++));
                        }
                        String expr = ElementwiseExpr.parse(n.attrs().getString("expr", "")).substitute(map).toString();
                        return Rewrite.to(Build.named(cx, n.name(), Op.ELEMENTWISE_FUSED, Attrs.of("expr", expr), ins));
                    }
                }
                return null;
            }));

    @Override
    public String name() {
        return "fuse-elementwise";
    }

    @Override
    public String summary() {
        return "merge chains of elementwise ops into one elementwise op with an expression";
    }

    @Override
    public Graph run(Graph g) {
        Verifier.verify(g, name());
        return RewriteEngine.run(name(), g, RULES);
    }

    /** n with its input i (produced by p) replaced by p's expression over p's inputs. */
    private static Node merge(Node n, int i, Node p, RewriteContext cx) {
        List<String> ins = new ArrayList<>();
        List<ElementwiseExpr> outer = new ArrayList<>();
        for (int j = 0; j < n.inputs().size(); j++) {
            outer.add(j == i ? null : new ElementwiseExpr.In(slot(ins, n.input(j))));
        }
        List<ElementwiseExpr> inner = new ArrayList<>();
        for (String v : p.inputs()) {
            inner.add(new ElementwiseExpr.In(slot(ins, v)));
        }
        outer.set(i, expr(p).substitute(inner));
        String e = expr(n).substitute(outer).toString();
        return Build.named(cx, n.name(), Op.ELEMENTWISE_FUSED, Attrs.of("expr", e), ins);
    }

    private static int slot(List<String> ins, String v) {
        int k = ins.indexOf(v);
        if (k < 0) {
            ins.add(v);
            k = ins.size() - 1;
        }
        return k;
    }

    /** Whether {@code n} has an expression form: elementwise, and no cast to an integer type (the expression language computes floats). */
    private static boolean fusible(Node n) {
        return n.op().isElementwise() && n.type().dtype().isFloating();
    }

    /** How many times the expression reads input {@code i}: more than once would recompute its producer. */
    private static int uses(ElementwiseExpr e, int i) {
        return switch (e) {
            case ElementwiseExpr.In in -> in.index() == i ? 1 : 0;
            case ElementwiseExpr.Const c -> 0;
            case ElementwiseExpr.Call c -> c.args().stream().mapToInt(a -> uses(a, i)).sum();
        };
    }

    /** Whether the expression rounds to a 16-bit type; such a cast stays at the root, where the store does it. */
    private static boolean narrows(ElementwiseExpr e) {
        return e instanceof ElementwiseExpr.Call c && (c.fn().equals("cast_bf16") || c.fn().equals("cast_f16")
                || c.args().stream().anyMatch(FuseElementwise::narrows));
    }

    /** The expression of an elementwise node over its own inputs $0, $1, ... */
    static ElementwiseExpr expr(Node n) {
        if (n.op() == Op.ELEMENTWISE_FUSED) {
            return ElementwiseExpr.parse(n.attrs().getString("expr", ""));
        }
        String fn = switch (n.op()) {
            case GELU -> n.attrs().getString("approximate", "tanh").equals("tanh") ? "gelu_tanh" : "gelu_erf";
            case GELU_GRAD -> n.attrs().getString("approximate", "tanh").equals("tanh") ? "gelu_tanh_grad" : "gelu_erf_grad";
            case CAST -> "cast_" + n.attrs().getString("to", "f32");
            default -> n.op().text();
        };
        List<ElementwiseExpr> args = new ArrayList<>();
        for (int j = 0; j < n.inputs().size(); j++) {
            args.add(new ElementwiseExpr.In(j));
        }
        return new ElementwiseExpr.Call(fn, args);
    }
}
