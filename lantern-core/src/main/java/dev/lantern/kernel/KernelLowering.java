package dev.lantern.kernel;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.ElementwiseExpr;
import dev.lantern.ir.Graph;

import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.ir.TensorType;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Describes the kernel that computes one (fused) IR node: kind, loop nest, tile, operands with
 * their layouts, the primitive ops it covers, and its cache key. One small describer per op
 * family, in a table keyed by op; an op with no entry has no kernel (the partition pass reports
 * it with the node). Free views (a reshape of a contiguous value, a permute whose type carries
 * strides) and constants have no kernel: readers see them through strides.
 */
public final class KernelLowering {
    private KernelLowering() {}

    /** What a describer decides; the lowering adds the index, name, operands and key. */
    record Described(KernelKind kind, List<String> fusedOps, IterationSpace space, Tile tile,
                  List<String> roles, List<Operand> workspace, Map<String, String> spec) {}

    @FunctionalInterface
    interface Describer {
        Described describe(Node n, Graph g);
    }

    private static final Map<Op, Describer> TABLE = new EnumMap<>(Op.class);

    /** Attention strategies (the kernel's {@code strategy} specialization constant). */
    public static final String ATTENTION_PER_HEAD = "per_head_gemm";
    public static final String ATTENTION_FLASH = "flash";
    /** The largest (s × t) score block that one task keeps whole: 4 Mi floats, 16 MiB. */
    public static final long ATTENTION_SCORE_LIMIT = 4L << 20;

    static {
        TABLE.put(Op.MATMUL, KernelLowering::gemm);
        TABLE.put(Op.GEMM, KernelLowering::gemm);
        TABLE.put(Op.ATTENTION, KernelLowering::attention);
        TABLE.put(Op.RMS_NORM, KernelLowering::norm);
        TABLE.put(Op.LAYER_NORM, KernelLowering::norm);
        TABLE.put(Op.FUSED_NORM, KernelLowering::norm);
        TABLE.put(Op.NORM_WEIGHT_GRAD, KernelLowering::normWeightGrad);
        TABLE.put(Op.SOFTMAX, KernelLowering::rowwise);
        TABLE.put(Op.ROPE, KernelLowering::rowwise);
        TABLE.put(Op.PERMUTE, KernelLowering::copy);
        TABLE.put(Op.TRANSPOSE, KernelLowering::copy);
        TABLE.put(Op.RESHAPE, KernelLowering::copy);
        TABLE.put(Op.SLICE, KernelLowering::copy);
        TABLE.put(Op.CONCAT, KernelLowering::copy);
        TABLE.put(Op.GATHER, KernelLowering::gather);
        // the gradient helpers and the loss (autodiff): the row-wise ones as one task per row, the
        // reductions as their own kernel (nothing fuses into them yet), scatter_add as a copy kind
        TABLE.put(Op.SOFTMAX_GRAD, KernelLowering::rowwise);
        TABLE.put(Op.RMS_NORM_GRAD, KernelLowering::rowwise);
        TABLE.put(Op.LAYER_NORM_GRAD, KernelLowering::rowwise);
        TABLE.put(Op.CROSS_ENTROPY_GRAD, KernelLowering::rowwise);
        TABLE.put(Op.REDUCE_SUM, KernelLowering::reduction);
        TABLE.put(Op.CROSS_ENTROPY, KernelLowering::reduction);
        TABLE.put(Op.SCATTER_ADD, KernelLowering::copy);
        TABLE.put(Op.ATTENTION_LSE, KernelLowering::attentionGrad);
        TABLE.put(Op.ATTENTION_GRAD_Q, KernelLowering::attentionGrad);
        TABLE.put(Op.ATTENTION_GRAD_KV, KernelLowering::attentionGrad);
        for (Op op : Op.values()) {
            if (op.isElementwise()) {
                TABLE.put(op, KernelLowering::elementwise);
            }
        }
    }

    /** Whether {@code n} needs no kernel: a source, a constant, or a view readers take through strides. */
    public static boolean isFree(Node n, Graph g) {
        if (n.op().isSource()) {
            return true;
        }
        return switch (n.op()) {
            case RESHAPE -> g.type(n.input(0)).layout().isContiguous();
            case PERMUTE, TRANSPOSE -> !n.type().layout().isContiguous();
            default -> false;
        };
    }

    /** The value whose storage {@code value} reads: itself, or the base of the free view chain it is. */
    public static String storage(Graph g, String value) {
        Node n = g.node(value);
        while (n != null && !n.op().isSource() && isFree(n, g)) {
            n = g.node(n.input(0));
        }
        return n == null ? value : n.name();
    }

    /** {@code value} as kernel input {@code role}: its type and layout, and the storage it is read from. */
    static Operand operand(Graph g, String value, String role) {
        String base = storage(g, value);
        Node bn = g.node(base);
        Operand.Origin origin = bn == null ? Operand.Origin.INTERMEDIATE : switch (bn.op()) {
            case INPUT -> Operand.Origin.INPUT;
            case PARAM -> Operand.Origin.PARAM;
            case CONSTANT -> Operand.Origin.CONSTANT;
            default -> Operand.Origin.INTERMEDIATE;
        };
        return Operand.of(value, role, g.type(value)).stored(base, g.type(base).contiguous().bytes(), origin);
    }

    /** Whether input {@code input} of {@code op} is integer ids that its kernel reads as indices, not as numbers. */
    public static boolean readsIntegerIds(Op op, int input) {
        return input == 1 && (op == Op.GATHER || op == Op.SCATTER_ADD || op == Op.CROSS_ENTROPY || op == Op.CROSS_ENTROPY_GRAD);
    }

    /** Whether some kernel computes {@code op}. */
    public static boolean supports(Op op) {
        return TABLE.containsKey(op);
    }

    /** The kernel for {@code n}, number {@code index} of the schedule. */
    public static Kernel lower(Node n, Graph g, int index, Target target) {
        return lower(n, g, index, target, null);
    }

    /**
     * As above; {@code savedLse}, when not null, is the attention_lse node whose value attention
     * {@code n}'s kernel also writes ({@link SavedLse}): a side output in role {@code lse}.
     */
    public static Kernel lower(Node n, Graph g, int index, Target target, Node savedLse) {
        Describer d = TABLE.get(n.op());
        if (d == null) {
            throw new IllegalArgumentException("no kernel for " + n.op());
        }
        Described s = d.describe(n, g);
        List<Operand> side = List.of();
        if (savedLse != null) {
            if (n.op() != Op.ATTENTION) {
                throw new IllegalArgumentException("only attention writes a saved lse, not " + n);
            }
            List<String> ops = new ArrayList<>(s.fusedOps());
            ops.add(Op.ATTENTION_LSE.text());
            Map<String, String> spec = new TreeMap<>(s.spec());
            spec.put("lse", "saved");
            s = new Described(s.kind(), ops, s.space(), s.tile(), s.roles(), s.workspace(), spec);
            side = List.of(Operand.of(savedLse.name(), "lse", savedLse.type().contiguous()));
        }
        if (target.arch().equals("cuda") && n.op() == Op.ATTENTION && n.attrs().getBool("rope", false)) {
            // The CUDA attention kernel does not rotate: q and k are roped first into planned scratch
            // in the kernel's storage dtype (bf16 tensor-core operands), whatever the CPU strategy
            dev.lantern.ir.DType dt = g.type(n.input(0)).dtype();
            Shape q = g.type(n.input(0)).shape();
            Shape k = g.type(n.input(1)).shape();
            List<Operand> ws = List.of(new Operand(n.name() + ".q_rope", "q_rope", dt, q, q.contiguousStrides()),
                    new Operand(n.name() + ".k_rope", "k_rope", dt, k, k.contiguousStrides()));
            s = new Described(s.kind(), s.fusedOps(), s.space(), s.tile(), s.roles(), ws, s.spec());
        }
        List<Operand> ins = new ArrayList<>();
        for (int i = 0; i < n.inputs().size(); i++) {
            String role = i < s.roles().size() ? s.roles().get(i) : "in" + i;
            ins.add(operand(g, n.input(i), role));
        }
        Operand out = Operand.of(n.name(), "out", n.type().contiguous());
        String name = "k" + index + "_" + String.join("_", s.fusedOps().stream().distinct().limit(4).toList());
        return new Kernel(index, name, s.kind(), n, s.fusedOps(), s.space(), s.tile(), target.vectorLanes(),
                ins, out, side, s.workspace(), key(n, s, ins, out, target));
    }

    private static KernelKey key(Node n, Described s, List<Operand> ins, Operand out, Target target) {
        List<String> dtypes = new ArrayList<>();
        List<String> layouts = new ArrayList<>();
        for (Operand o : ins) {
            dtypes.add(o.dtype().text());
            layouts.add(o.contiguous() ? "contiguous" : o.layoutText());
        }
        dtypes.add(out.dtype().text());
        layouts.add("contiguous");
        // The source is the op with its operands named by role: the same fused computation on the same
        // types hashes the same whatever the SSA names were.
        List<String> roleNames = ins.stream().map(Operand::role).toList();
        String source = s.kind() + ":" + new Node("out", n.op(), roleNames, n.attrs(), n.type());
        TreeMap<String, String> spec = new TreeMap<>(s.spec());
        return new KernelKey(target.arch(), dtypes, layouts, s.tile(), spec,
                dev.lantern.ir.GraphHash.sha256(source), target.compilers());
    }

    private static Described gemm(Node n, Graph g) {
        TensorType a = g.type(n.input(0));
        Shape out = n.type().shape();
        boolean ta = n.attrs().getBool("transpose_a", false);
        int m = out.dim(-2);
        int nn = out.dim(-1);
        int k = ta ? a.shape().dim(-2) : a.shape().dim(-1);
        long batch = 1; // the product of the leading dims, not numel / (m·n): m or n may be 0
        for (int i = 0; i < out.rank() - 2; i++) {
            batch *= out.dim(i);
        }
        boolean bias = n.attrs().getBool("bias", false);
        String act = n.attrs().getString("act", "none");
        int residuals = n.inputs().size() - 2 - (bias ? 1 : 0);
        List<String> ops = new ArrayList<>(List.of("matmul"));
        List<String> roles = new ArrayList<>(List.of("a", "b"));
        if (bias) {
            ops.add("add");
            roles.add("bias");
        }
        if (!act.equals("none")) {
            ops.add(act.startsWith("gelu") ? "gelu" : act);
        }
        for (int r = 0; r < residuals; r++) {
            ops.add("add");
            roles.add("residual" + r);
        }
        if (n.attrs().has("out")) {
            ops.add("cast");
        }
        Map<String, String> spec = Map.of("M", "" + m, "N", "" + nn, "K", "" + k, "batch", "" + batch,
                "act", act, "bias", "" + bias, "residuals", "" + residuals,
                "transpose_a", "" + ta, "transpose_b", "" + n.attrs().getBool("transpose_b", false));
        return new Described(KernelKind.GEMM, ops,
                new IterationSpace(List.of(new IterationSpace.Axis("batch", batch), new IterationSpace.Axis("m", m), new IterationSpace.Axis("n", nn)),
                        List.of(new IterationSpace.Axis("k", k))),
                Tile.of("mc", 120, "nc", 256, "kc", 256, "mr", 6, "nr", 16), roles, List.of(), spec);
    }

    private static Described attention(Node n, Graph g) {
        Shape q = g.type(n.input(0)).shape();
        Shape k = g.type(n.input(1)).shape();
        boolean rope = n.attrs().getBool("rope", false);
        // Score blocks that fit a thread's memory run as two GEMMs per (batch, head) with rope applied
        // while loading q and k; longer sequences stream key blocks (flash) and rope into scratch.
        boolean perHead = (long) q.dim(2) * k.dim(2) <= ATTENTION_SCORE_LIMIT;
        List<String> ops = new ArrayList<>();
        List<Operand> ws = new ArrayList<>();
        if (rope) {
            ops.addAll(List.of("rope", "rope"));
        }
        if (rope && !perHead) {
            ws.add(new Operand(n.name() + ".q_rope", "q_rope", dev.lantern.ir.DType.F32, q, q.contiguousStrides()));
            ws.add(new Operand(n.name() + ".k_rope", "k_rope", dev.lantern.ir.DType.F32, k, k.contiguousStrides()));
        }
        ops.addAll(List.of("matmul", "softmax", "matmul"));
        if (n.attrs().has("out_perm")) {
            ops.add("permute");
        }
        Map<String, String> spec = Map.ofEntries(Map.entry("B", "" + q.dim(0)), Map.entry("H", "" + q.dim(1)),
                Map.entry("HK", "" + k.dim(1)), Map.entry("S", "" + q.dim(2)), Map.entry("T", "" + k.dim(2)),
                Map.entry("D", "" + q.dim(3)), Map.entry("causal", "" + n.attrs().getBool("causal", false)),
                Map.entry("scale", "" + n.attrs().getDouble("scale", 1.0)), Map.entry("rope", "" + rope),
                Map.entry("out_perm", n.attrs().has("out_perm") ? java.util.Arrays.toString(n.attrs().getInts("out_perm")) : "none"),
                Map.entry("strategy", perHead ? ATTENTION_PER_HEAD : ATTENTION_FLASH),
                Map.entry("mask", n.inputs().size() > 3 ? g.type(n.input(3)).shape().toString() : "none"));
        return new Described(KernelKind.ATTENTION, ops,
                new IterationSpace(List.of(new IterationSpace.Axis("b", q.dim(0)), new IterationSpace.Axis("h", q.dim(1)), new IterationSpace.Axis("s", q.dim(2))),
                        List.of(new IterationSpace.Axis("t", k.dim(2)), new IterationSpace.Axis("d", q.dim(3)))),
                perHead ? Tile.of("q_block", q.dim(2), "kv_block", k.dim(2)) : Tile.of("q_block", 32, "kv_block", 64),
                n.inputs().size() > 3 ? List.of("q", "k", "v", "mask") : List.of("q", "k", "v"), ws, spec);
    }

    /**
     * attention's backward ops: (batch, head, query block) tasks for lse and dq, (batch, K/V head,
     * key block) tasks for dk;dv, each recomputing its score blocks (never the whole (s, t)).
     */
    private static Described attentionGrad(Node n, Graph g) {
        Shape q = g.type(n.input(0)).shape();
        Shape k = g.type(n.input(1)).shape();
        Attrs a = n.op().withDefaults(n.attrs());
        boolean lse = n.op() == Op.ATTENTION_LSE;
        boolean mask = n.inputs().size() > (lse ? 2 : 6);
        List<String> roles = new ArrayList<>(lse ? List.of("q", "k") : List.of("q", "k", "v", "o", "dy", "lse"));
        if (mask) {
            roles.add("mask");
        }
        Map<String, String> spec = Map.of("B", "" + q.dim(0), "H", "" + q.dim(1), "HK", "" + k.dim(1), "S", "" + q.dim(2),
                "T", "" + k.dim(2), "D", "" + q.dim(3), "causal", "" + a.getBool("causal", false),
                "scale", "" + a.getDouble("scale", 1.0), "mask", mask ? g.type(n.input(roles.size() - 1)).shape().toString() : "none");
        boolean kv = n.op() == Op.ATTENTION_GRAD_KV;
        IterationSpace space = kv
                ? new IterationSpace(List.of(new IterationSpace.Axis("b", q.dim(0)), new IterationSpace.Axis("hk", k.dim(1)),
                        new IterationSpace.Axis("t", k.dim(2))), List.of(new IterationSpace.Axis("s", q.dim(2)), new IterationSpace.Axis("d", q.dim(3))))
                : new IterationSpace(List.of(new IterationSpace.Axis("b", q.dim(0)), new IterationSpace.Axis("h", q.dim(1)),
                        new IterationSpace.Axis("s", q.dim(2))), List.of(new IterationSpace.Axis("t", k.dim(2)), new IterationSpace.Axis("d", q.dim(3))));
        return new Described(KernelKind.ATTENTION, List.of(n.op().text()), space, Tile.of("q_block", 32, "kv_block", 64), roles, List.of(), spec);
    }

    private static Described norm(Node n, Graph g) {
        Shape x = g.type(n.input(0)).shape();
        String kind = n.op() == Op.FUSED_NORM ? n.attrs().getString("kind", "rms") : n.op() == Op.RMS_NORM ? "rms" : "layer";
        boolean res = n.attrs().getBool("residual", false);
        List<String> ops = new ArrayList<>();
        List<String> roles = new ArrayList<>(List.of("x"));
        if (res) {
            ops.add("add");
            roles.add("residual");
        }
        ops.add(kind + "_norm");
        roles.add("weight");
        roles.add("bias");
        if (n.attrs().has("out")) {
            ops.add("cast");
        }
        Map<String, String> spec = Map.of("rows", "" + x.rows(), "D", "" + x.last(), "kind", kind, "residual", "" + res,
                "eps", "" + n.attrs().getDouble("eps", 0));
        return new Described(KernelKind.ROWWISE, ops, rows(x), Tile.of("rows", 1, "cols", x.last()), roles, List.of(), spec);
    }

    /** norm_weight_grad: row statistics per row, the products summed over rows per column in a fixed order. */
    private static Described normWeightGrad(Node n, Graph g) {
        Shape x = g.type(n.input(0)).shape();
        String kind = n.attrs().getString("kind", "rms");
        Map<String, String> spec = Map.of("rows", "" + x.rows(), "D", "" + x.last(), "kind", kind,
                "eps", "" + n.attrs().getDouble("eps", 0));
        return new Described(KernelKind.REDUCTION, List.of(kind + "_norm", "mul", "reduce_sum"), rows(x),
                Tile.of("rows", 1, "cols", x.last()), List.of("x", "dy"), List.of(), spec);
    }

    private static Described rowwise(Node n, Graph g) {
        Shape x = g.type(n.input(0)).shape();
        TreeMap<String, String> spec = new TreeMap<>();
        n.op().withDefaults(n.attrs()).values().forEach((k, v) -> spec.put(k, String.valueOf(v)));
        spec.put("rows", "" + x.rows());
        spec.put("D", "" + x.last());
        return new Described(KernelKind.ROWWISE, List.of(n.op().text()), rows(x), Tile.of("rows", 1, "cols", x.last()), List.of("x"), List.of(), spec);
    }

    /** reduce_sum and cross_entropy: one task per output element, the reduced elements summed in a fixed order. */
    private static Described reduction(Node n, Graph g) {
        Shape x = g.type(n.input(0)).shape();
        long out = n.type().shape().numel();
        TreeMap<String, String> spec = new TreeMap<>();
        n.op().withDefaults(n.attrs()).values().forEach((k, v) -> spec.put(k, String.valueOf(v)));
        spec.put("in", x.toString());
        spec.put("out", n.type().shape().toString());
        return new Described(KernelKind.REDUCTION, List.of(n.op().text()),
                new IterationSpace(List.of(new IterationSpace.Axis("o", out)), List.of(new IterationSpace.Axis("r", out == 0 ? 0 : x.numel() / out))),
                Tile.of("chunk", 1), List.of(), List.of(), spec);
    }

    private static IterationSpace rows(Shape x) {
        return new IterationSpace(List.of(new IterationSpace.Axis("row", x.rows())), List.of(new IterationSpace.Axis("d", x.last())));
    }

    private static Described elementwise(Node n, Graph g) {
        List<String> ops = new ArrayList<>();
        if (n.op() == Op.ELEMENTWISE_FUSED) {
            calls(ElementwiseExpr.parse(n.attrs().getString("expr", "")), ops);
        } else {
            ops.add(n.op().text());
        }
        long numel = n.type().shape().numel();
        Map<String, String> spec = Map.of("numel", "" + numel, "shape", n.type().shape().toString(),
                "expr", n.op() == Op.ELEMENTWISE_FUSED ? n.attrs().getString("expr", "") : n.op().text());
        return new Described(KernelKind.ELEMENTWISE, ops,
                new IterationSpace(List.of(new IterationSpace.Axis("i", numel)), List.of()),
                Tile.of("chunk", 1024), List.of(), List.of(), spec);
    }

    private static void calls(ElementwiseExpr e, List<String> out) {
        if (e instanceof ElementwiseExpr.Call c) {
            c.args().forEach(a -> calls(a, out));
            out.add(c.fn().startsWith("gelu") ? "gelu" : c.fn().startsWith("cast") ? "cast" : c.fn());
        }
    }

    /** One task per gathered row (outer × ids); each copies the {@code inner} elements after the axis. */
    private static Described gather(Node n, Graph g) {
        Shape table = g.type(n.input(0)).shape();
        Shape ids = g.type(n.input(1)).shape();
        int axis = n.attrs().getInt("axis", 0);
        axis = axis < 0 ? axis + table.rank() : axis;
        long outer = 1;
        long inner = 1;
        for (int a = 0; a < table.rank(); a++) {
            if (a < axis) {
                outer *= table.dim(a);
            } else if (a > axis) {
                inner *= table.dim(a);
            }
        }
        Map<String, String> spec = Map.of("axis", "" + axis, "rows", "" + table.dim(axis), "ids", "" + ids.numel(),
                "outer", "" + outer, "inner", "" + inner);
        return new Described(KernelKind.COPY, List.of("gather"),
                new IterationSpace(List.of(new IterationSpace.Axis("row", outer * ids.numel()), new IterationSpace.Axis("i", inner)), List.of()),
                Tile.of("rows", 1, "cols", (int) Math.min(inner, Integer.MAX_VALUE)), List.of("table", "ids"), List.of(), spec);
    }

    private static Described copy(Node n, Graph g) {
        long numel = n.type().shape().numel();
        Map<String, String> spec = Map.of("numel", "" + numel, "attrs", n.attrs().toString());
        return new Described(KernelKind.COPY, List.of(n.op().text()),
                new IterationSpace(List.of(new IterationSpace.Axis("i", numel)), List.of()),
                Tile.of("chunk", 1024), List.of(), List.of(), spec);
    }

}
