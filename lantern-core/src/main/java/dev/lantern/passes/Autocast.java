package dev.lantern.passes;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Verifier;
import dev.lantern.passes.Rule.Rewrite;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * autocast (AMP, opt-in): GEMMs and attention in bf16 (or f16) with f32 accumulation; norms,
 * softmax and reductions in f32; casts at the boundaries. Algorithm (rules to a fixed point):
 * <pre>
 *   matmul / attention on f32           ->  cast inputs to low, op in low, cast the result to f32
 *   softmax / norms on a low input      ->  cast inputs to f32, op in f32, cast the result back
 *   cast(param f32) {to=low}            ->  the parameter declared low (converted once, at bind time)
 *   cast(view(x))                       ->  view(cast(x))   (casts travel up to their producer)
 *   cast(cast(x {low}) {to=f32}) {to=low} -> x              (a lossless round trip)
 * </pre>
 * plus canonicalize's identity-cast and common-subexpression rules (three projections of one
 * normed activation share one cast) and layout-normalize's rules (a moved view may become free).
 * Fusion later folds the remaining casts into the GEMM's output dtype ({@code out="f32"}) and
 * the norm's ({@code out="bf16"}), so the boundaries cost no kernel of their own.
 */
public final class Autocast implements Pass {
    /** Ops computed in the low dtype; their accumulation stays f32 (the kernels' rule). */
    private static final Set<Op> LOW = EnumSet.of(Op.MATMUL, Op.ATTENTION);
    /** Ops always computed in f32. */
    private static final Set<Op> F32 = EnumSet.of(Op.SOFTMAX, Op.RMS_NORM, Op.LAYER_NORM);

    private final DType low;
    private final List<Rule> rules;

    public Autocast(DType low) {
        if (low != DType.BF16 && low != DType.F16) {
            throw new IllegalArgumentException("autocast to bf16 or f16, not " + low);
        }
        this.low = low;
        List<Rule> r = new ArrayList<>(List.of(
                Rule.of("low-precision-op", this::lowOp),
                Rule.of("f32-island", this::f32Island),
                Rule.of("param-in-low-precision", this::lowParam),
                Rule.of("cast-through-view", Autocast::castThroughView),
                Rule.of("cast-round-trip", Autocast::roundTrip)));
        r.addAll(Canonicalize.RULES.stream().filter(x -> x.name().equals("identity-cast") || x.name().equals("common-subexpression")).toList());
        r.addAll(LayoutNormalize.RULES);
        this.rules = List.copyOf(r);
    }

    @Override
    public String name() {
        return low == DType.BF16 ? "autocast" : "autocast-f16";
    }

    @Override
    public String summary() {
        return "AMP: matmul/attention in " + low + " with f32 accumulation, norms/softmax in f32, casts at the boundaries";
    }

    @Override
    public Graph run(Graph g) {
        Verifier.verify(g, name());
        return RewriteEngine.run(name(), g, rules);
    }

    private Rewrite lowOp(Node n, RewriteContext cx) {
        return LOW.contains(n.op()) && n.type().dtype() == DType.F32 ? around(n, cx, low, DType.F32) : null;
    }

    private Rewrite f32Island(Node n, RewriteContext cx) {
        return F32.contains(n.op()) && n.type().dtype() != DType.F32 && n.type().dtype().isFloating()
                ? around(n, cx, DType.F32, n.type().dtype()) : null;
    }

    /** Every floating input cast to {@code inner}, the op in {@code inner}, the result cast back to {@code outer} under n's name. */
    private static Rewrite around(Node n, RewriteContext cx, DType inner, DType outer) {
        List<Node> out = new ArrayList<>();
        List<String> ins = new ArrayList<>();
        for (String v : n.inputs()) {
            if (cx.type(v).dtype() == inner) {
                ins.add(v);
            } else {
                Node c = Build.cast(cx, v, inner);
                out.add(c);
                ins.add(c.name());
            }
        }
        Node op = new Node(cx.fresh(), n.op(), ins, n.attrs(), n.type().withDtype(inner));
        out.add(op);
        out.add(new Node(n.name(), Op.CAST, List.of(op.name()), Attrs.of("to", outer.text()), n.type()));
        return Rewrite.to(out);
    }

    private Rewrite lowParam(Node n, RewriteContext cx) {
        Node p = n.op() == Op.CAST ? cx.in(n, 0, Op.PARAM) : null;
        if (p == null || p.type().dtype() != DType.F32 || n.type().dtype() != low || !cx.onlyUsedBy(p.name(), n)) {
            return null;
        }
        return Rewrite.to(new Node(n.name(), Op.PARAM, List.of(), p.attrs(), p.type().withDtype(low)));
    }

    private static Rewrite castThroughView(Node n, RewriteContext cx) {
        if (n.op() != Op.CAST) {
            return null;
        }
        Node v = cx.in(n, 0);
        boolean view = v.op() == Op.PERMUTE || (v.op() == Op.RESHAPE && cx.type(v.input(0)).layout().isContiguous());
        if (!view || !cx.onlyUsedBy(v.name(), n) || cx.producer(v.input(0)).op() == Op.PARAM) {
            return null;
        }
        Node c = Build.cast(cx, v.input(0), n.type().dtype());
        return Rewrite.to(c, new Node(n.name(), v.op(), List.of(c.name()), v.attrs(), v.type().withDtype(n.type().dtype())));
    }

    private static Rewrite roundTrip(Node n, RewriteContext cx) {
        Node mid = n.op() == Op.CAST ? cx.in(n, 0, Op.CAST) : null;
        if (mid == null) {
            return null;
        }
        DType src = cx.type(mid.input(0)).dtype();
        return src == n.type().dtype() && mid.type().dtype() == DType.F32 ? Rewrite.alias(mid.input(0)) : null;
    }
}
