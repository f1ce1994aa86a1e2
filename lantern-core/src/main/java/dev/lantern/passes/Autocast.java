package dev.lantern.passes;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.OpKind;
import dev.lantern.ir.Verifier;
import dev.lantern.passes.Rule.Rewrite;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * autocast (AMP, opt-in): GEMMs and attention in bf16 (or f16) with f32 accumulation; norms,
 * softmax and reductions in f32; casts at the boundaries. Algorithm (rules to a fixed point):
 * <pre>
 *   matmul / attention on f32           ->  cast inputs to low, op in low, cast the result to f32
 *   softmax / norms on a low input      ->  cast inputs to f32, op in f32, cast the result back
 *   attention_lse / _grad_q / _grad_kv  ->  q, k, v, o, dy, mask cast to low, lse kept f32, gradients cast to f32
 *   cast(param f32) {to=low}            ->  the parameter declared low (converted once, at bind time)
 *   ew(cast(a {low}) {to=f32}, ...)     ->  cast(ew(a, ...) {low}) {to=f32}  (elementwise ops and RoPE whose
 *                                           inputs are all low stay low, as torch.autocast runs them;
 *                                           an f32 bias vector joins them, cast, when the result is
 *                                           only read in low precision)
 *   cast(view(x))                       ->  view(cast(x))   (casts travel up to their producer; a slice
 *                                           only when every reader of x is a slice cast to the same dtype)
 *   view(cast(x {low}) {to=f32})        ->  cast(view(x)) {to=f32}  (permute, reshape or slice, when every
 *                                           read of the view ends low: upcasts travel down to their readers)
 *   gather(p f32, ids), cast(p) {to=low} elsewhere -> cast(gather(cast(p), ids)) {to=f32}  (a tied
 *                                           embedding is kept once, in low precision)
 *   cast(cast(x {low}) {to=f32}) {to=low} -> x              (a lossless round trip)
 * </pre>
 * The elementwise rule is what lets a GEMM write low precision where its readers are low anyway:
 * LLaMA's gate and up projections feed silu(g)·u, whose product goes to the down projection in
 * low precision, so f32 copies of both (and of q, k after RoPE) would be written and read only to
 * be rounded.
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
    private final boolean lowOutputs;
    private final List<Rule> rules;

    public Autocast(DType low) {
        this(low, false);
    }

    /** {@code lowOutputs}: a graph output that a low-precision op computes stays low (CompileOptions.lowOutputs). */
    public Autocast(DType low, boolean lowOutputs) {
        this.lowOutputs = lowOutputs;
        if (low != DType.BF16 && low != DType.F16) {
            throw new IllegalArgumentException("autocast to bf16 or f16, not " + low);
        }
        this.low = low;
        List<Rule> r = new ArrayList<>(List.of(
                Rule.of("low-precision-op", this::lowOp),
                Rule.of("f32-island", this::f32Island),
                Rule.of("attention-backward-low", this::lowAttentionBackward),
                Rule.of("param-in-low-precision", this::lowParam),
                Rule.of("elementwise-stays-low", this::lowElementwise),
                Rule.of("gather-from-low-table", this::lowGather),
                Rule.of("cast-through-view", this::castThroughView),
                Rule.of("upcast-through-view", this::upcastThroughView),
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
        Graph out = RewriteEngine.run(name(), g, rules);
        return lowOutputs ? Verifier.verify(keepOutputsLow(out), name() + " (outputs kept low)") : out;
    }

    private Rewrite lowOp(Node n, RewriteContext cx) {
        return LOW.contains(n.op()) && n.type().dtype() == DType.F32 ? around(n, cx, low, DType.F32) : null;
    }

    /**
     * attention's backward ops read q, k, v, o, dy (and the mask) in low precision, as the forward
     * attention does; lse stays f32 (it is a log-sum of exponentials: bf16 would round e^(s − lse)
     * by up to 2^-8 relative). attention_lse's result is f32 whatever its inputs, so no cast after
     * it; the gradients are cast back to f32.
     */
    private Rewrite lowAttentionBackward(Node n, RewriteContext cx) {
        boolean lse = n.op() == Op.ATTENTION_LSE;
        if (!lse && n.op() != Op.ATTENTION_GRAD_Q && n.op() != Op.ATTENTION_GRAD_KV || cx.type(n.input(0)).dtype() != DType.F32) {
            return null;
        }
        List<Node> out = new ArrayList<>();
        List<String> ins = new ArrayList<>();
        for (int i = 0; i < n.inputs().size(); i++) {
            String v = n.input(i);
            if (!lse && i == 5 || cx.type(v).dtype() == low) {
                ins.add(v);
            } else {
                Node c = Build.cast(cx, v, low);
                out.add(c);
                ins.add(c.name());
            }
        }
        if (lse) {
            out.add(new Node(n.name(), n.op(), ins, n.attrs(), n.type()));
            return Rewrite.to(out);
        }
        Node op = new Node(cx.fresh(), n.op(), ins, n.attrs(), n.type().withDtype(low));
        out.add(op);
        out.add(new Node(n.name(), Op.CAST, List.of(op.name()), Attrs.of("to", DType.F32.text()), n.type()));
        return Rewrite.to(out);
    }

    /**
     * Every graph output {@code o = cast(x) {to=f32}} with x low and read by nothing else becomes x
     * itself under o's name: the output keeps its name and turns low (a rewrite rule may not change
     * a value's type, so this runs after them).
     */
    private static Graph keepOutputsLow(Graph g) {
        Map<String, List<Node>> users = g.users();
        Map<String, String> renamed = new HashMap<>();
        for (String o : g.outputs()) {
            Node c = g.node(o);
            if (c == null || c.op() != Op.CAST || c.type().dtype() != DType.F32) {
                continue;
            }
            Node x = g.node(c.input(0));
            boolean low = x != null && !x.op().isSource() && x.type().dtype().isFloating() && x.type().dtype().bytes() < 4;
            if (low && users.getOrDefault(x.name(), List.of()).size() == 1 && !g.outputs().contains(x.name())) {
                renamed.put(x.name(), o);
            }
        }
        if (renamed.isEmpty()) {
            return g;
        }
        List<Node> nodes = new ArrayList<>();
        for (Node n : g.nodes()) {
            if (renamed.containsValue(n.name()) && n.op() == Op.CAST) {
                continue; // the cast back to f32 goes; its producer takes its name
            }
            nodes.add(renamed.containsKey(n.name()) ? n.withName(renamed.get(n.name())) : n);
        }
        return g.withNodes(nodes, g.outputs());
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

    /** An elementwise op (or RoPE) whose floating inputs are all f32 casts of low values runs in low. */
    private Rewrite lowElementwise(Node n, RewriteContext cx) {
        if (!staysLow(n.op()) || n.type().dtype() != DType.F32 || n.inputs().isEmpty()) {
            return null;
        }
        List<String> ins = new ArrayList<>();
        List<Node> out = new ArrayList<>();
        boolean lowInput = false;
        for (int i = 0; i < n.inputs().size(); i++) {
            Node c = cx.in(n, i, Op.CAST);
            if (c != null && cx.type(c.input(0)).dtype() == low) {
                ins.add(c.input(0));
                lowInput = true;
                continue;
            }
            // a bias (an f32 vector parameter) joins in low precision when the result is only ever read in low
            // precision anyway: GPT-2's projections then keep bias and GELU in cuBLASLt's epilogue
            Node p = cx.in(n, i, Op.PARAM);
            if (p == null || p.type().dtype() != DType.F32 || p.type().shape().rank() > 1 || !endsLow(n.name(), cx, 6)) {
                return null;
            }
            Node cast = Build.cast(cx, p.name(), low);
            out.add(cast);
            ins.add(cast.name());
        }
        if (!lowInput) {
            return null;
        }
        Node op = new Node(cx.fresh(), n.op(), ins, n.attrs(), n.type().withDtype(low));
        out.add(op);
        out.add(new Node(n.name(), Op.CAST, List.of(op.name()), Attrs.of("to", DType.F32.text()), n.type()));
        return Rewrite.to(out);
    }

    /** A gather from an f32 table that is also cast to low elsewhere reads the low copy instead. */
    private Rewrite lowGather(Node n, RewriteContext cx) {
        if (n.op() != Op.GATHER || n.type().dtype() != DType.F32) {
            return null;
        }
        Node table = cx.in(n, 0, Op.PARAM);
        if (table == null) {
            return null;
        }
        if (cx.users(table.name()).stream().noneMatch(u -> u.op() == Op.CAST && u.type().dtype() == low)) {
            return null;
        }
        // a cast of its own here (the other one may come later); common-subexpression merges the two
        Node lowCopy = Build.cast(cx, table.name(), low);
        Node g = new Node(cx.fresh(), Op.GATHER, List.of(lowCopy.name(), n.input(1)), n.attrs(), n.type().withDtype(low));
        return Rewrite.to(lowCopy, g, new Node(n.name(), Op.CAST, List.of(g.name()), Attrs.of("to", DType.F32.text()), n.type()));
    }

    private Rewrite lowParam(Node n, RewriteContext cx) {
        Node p = n.op() == Op.CAST ? cx.in(n, 0, Op.PARAM) : null;
        if (p == null || p.type().dtype() != DType.F32 || n.type().dtype() != low || !cx.onlyUsedBy(p.name(), n)) {
            return null;
        }
        return Rewrite.to(new Node(n.name(), Op.PARAM, List.of(), p.attrs(), p.type().withDtype(low)));
    }

    private Rewrite castThroughView(Node n, RewriteContext cx) {
        if (n.op() != Op.CAST || n.type().dtype() != low) {
            return null; // only casts to low travel up (f32 casts travel down: upcastThroughView)
        }
        Node v = cx.in(n, 0);
        boolean view = v.op() == Op.PERMUTE || (v.op() == Op.RESHAPE && cx.type(v.input(0)).layout().isContiguous())
                || (v.op() == Op.SLICE && slicesAllCastTo(v.input(0), n.type().dtype(), cx));
        if (!view || !cx.onlyUsedBy(v.name(), n) || cx.producer(v.input(0)).op() == Op.PARAM) {
            return null;
        }
        Node c = Build.cast(cx, v.input(0), n.type().dtype());
        return Rewrite.to(c, new Node(n.name(), v.op(), List.of(c.name()), v.attrs(), v.type().withDtype(n.type().dtype())));
    }

    /**
     * view(cast(x {low}) {to=f32}) -> cast(view(x)) {to=f32} when the view's one reader is an op the
     * elementwise-stays-low rule may keep low (q and k reach RoPE through reshape and permute), or
     * when every read of the view ends in a cast to low: in a training step q and k are read by the
     * attention (cast to low) and by the backward's RoPE recompute (cast to low after it), and
     * moving the upcast below the view lets both casts meet the GEMM's low output, so q and k are
     * stored once in low precision instead of in f32 from the forward to the backward. A slice
     * too: the flash backward writes dk;dv stacked in low precision, and each half (through
     * RoPE's inverse for dk) ends in a cast to low for its GEMMs, so the halves are sliced, roped
     * and read in low precision instead of widened whole to f32, sliced and rounded back (about
     * 0.8 ms of the 16x1024x4096 decoder step's 40).
     */
    private Rewrite upcastThroughView(Node n, RewriteContext cx) {
        boolean view = n.op() == Op.PERMUTE || n.op() == Op.RESHAPE || n.op() == Op.SLICE;
        Node c = view ? cx.in(n, 0, Op.CAST) : null;
        if (c == null || c.type().dtype() != DType.F32 || cx.type(c.input(0)).dtype() != low || cx.isOutput(n.name())) {
            return null;
        }
        boolean lowReaders = feedsLowReader(n.name(), cx) || endsLow(n.name(), cx, 6);
        if (!lowReaders || (n.op() == Op.RESHAPE && !cx.type(c.input(0)).layout().isContiguous())) {
            return null;
        }
        Node v = new Node(cx.fresh(), n.op(), List.of(c.input(0)), n.attrs(), n.type().withDtype(low));
        return Rewrite.to(v, new Node(n.name(), Op.CAST, List.of(v.name()), Attrs.of("to", DType.F32.text()), n.type()));
    }

    /**
     * Whether every read of {@code value} ends in a cast to low: directly, or through views, slices
     * and elementwise ops (at most {@code depth} deep), so rounding it to low loses nothing read.
     */
    private boolean endsLow(String value, RewriteContext cx, int depth) {
        List<Node> users = cx.users(value);
        if (depth == 0 || users.isEmpty() || cx.isOutput(value)) {
            return false;
        }
        for (Node u : users) {
            boolean ok = switch (u.op()) {
                case CAST -> u.type().dtype() == low;
                case PERMUTE, RESHAPE, SLICE, ROPE -> endsLow(u.name(), cx, depth - 1);
                default -> staysLow(u.op()) && endsLow(u.name(), cx, depth - 1);
            };
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    /** Whether {@code value}'s one reader, through reshapes and permutes, is RoPE or an elementwise op other than a cast. */
    private static boolean feedsLowReader(String value, RewriteContext cx) {
        List<Node> users = cx.users(value);
        if (users.size() != 1 || cx.isOutput(value)) {
            return false;
        }
        Node u = users.getFirst();
        if (u.op() == Op.PERMUTE || u.op() == Op.RESHAPE) {
            return feedsLowReader(u.name(), cx);
        }
        return staysLow(u.op());
    }

    /** The ops elementwise-stays-low may keep in low precision: RoPE and primitive elementwise ops other than casts. */
    private static boolean staysLow(Op op) {
        return op == Op.ROPE || (op.kind() == OpKind.ELEMENTWISE && op != Op.CAST && op != Op.ELEMENTWISE_FUSED);
    }

    /**
     * Whether every reader of {@code x} is a slice read only by one cast to {@code to} (or such a
     * cast itself): then casting x once, before slicing, converts no element twice and none that
     * is not read (GPT-2's q|k|v columns).
     */
    private static boolean slicesAllCastTo(String x, DType to, RewriteContext cx) {
        for (Node u : cx.users(x)) {
            boolean castHere = u.op() == Op.CAST && u.type().dtype() == to;
            boolean slicedThenCast = u.op() == Op.SLICE && cx.users(u.name()).size() == 1
                    && cx.users(u.name()).getFirst().op() == Op.CAST && cx.users(u.name()).getFirst().type().dtype() == to;
            if (!castHere && !slicedThenCast) {
                return false;
            }
        }
        return true;
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
