package dev.lantern.ir;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Builds random graphs from the op specs for the IR fuzz target. Each step picks an op from
 * {@link Op#values()}, draws inputs whose shapes fit the op (reusing earlier values or adding
 * sources), draws every attribute its {@link AttrSpec}s list, and asks the op's own type rule
 * ({@link Op#infer}) for the result type: a draw the rule refuses is dropped, so a graph in
 * {@code wellTyped} mode is well-typed by the spec itself. In {@code hostile} mode some attributes,
 * dimensions and declared types are edge values instead (huge, negative, 2^32 + 1, zero-size,
 * arbitrary strides), and the type rule is not asked: then the verifier must refuse the graph with
 * a typed error, or everything downstream must take it.
 */
public final class RandomGraphs {
    private final Draw data;
    private final boolean hostile;
    private final List<Node> nodes = new ArrayList<>();
    private final Map<String, TensorType> pool = new TreeMap<>();
    private int next;

    private RandomGraphs(FuzzedDataProvider data, boolean hostile) {
        this.data = new Draw(data);
        this.hostile = hostile;
    }

    /** A graph of up to {@code maxOps} compute ops; hostile graphs may be invalid. */
    public static Graph build(FuzzedDataProvider data, boolean hostile, int maxOps) {
        RandomGraphs r = new RandomGraphs(data, hostile);
        r.source(r.shape(1, 4), DType.F32);
        int ops = r.data.consumeInt(1, maxOps);
        for (int i = 0; i < ops; i++) {
            r.step();
        }
        List<String> outs = new ArrayList<>();
        for (Node n : r.nodes.reversed()) {
            if (!n.op().isSource() || outs.isEmpty()) {
                outs.add(n.name());
            }
            if (outs.size() >= 1 + (r.data.consumeBoolean() ? 1 : 0)) {
                break;
            }
        }
        return new Graph("fuzz", r.nodes, outs);
    }

    private void step() {
        Op op = data.pickValue(Arrays.stream(Op.values()).filter(o -> !o.isSource()).toList());
        for (int attempt = 0; attempt < 4; attempt++) {
            List<String> ins = inputs(op);
            if (ins == null) {
                continue;
            }
            Attrs attrs = attrs(op, ins);
            List<TensorType> types = ins.stream().map(pool::get).toList();
            TensorType t;
            try {
                t = op.infer(types, attrs);
            } catch (TypeException e) {
                if (!hostile) {
                    continue;
                }
                t = types.getFirst().contiguous();
            }
            if (hostile && data.consumeInt(0, 15) == 0) {
                t = mangle(t);
            }
            add(op, ins, attrs, t);
            return;
        }
    }

    // --- inputs: shapes that fit the op

    private List<String> inputs(Op op) {
        String x = data.pickValue(pool.keySet());
        TensorType xt = pool.get(x);
        Shape s = xt.shape();
        DType d = xt.dtype();
        return switch (op) {
            case ADD, SUB, MUL, DIV -> List.of(x, data.consumeBoolean() ? sameShaped(xt) : source(broadcastable(s), d));
            case MATMUL -> s.rank() < 2 ? null : List.of(x, source(Shape.of(s.dim(-1), dim()), d));
            case GEMM -> gemm(x, xt);
            case LAYER_NORM, RMS_NORM -> norm(op, x, xt, false);
            case FUSED_NORM -> norm(op, x, xt, true);
            case ATTENTION -> attention(xt);
            case ROPE -> s.rank() == 4 && s.last() % 2 == 0 ? List.of(x) : List.of(source(Shape.of(dim(), dim(), dim(), 2 * dim()), d));
            case CONCAT -> {
                List<String> l = new ArrayList<>(List.of(x));
                for (int i = data.consumeInt(0, 2); i > 0; i--) {
                    l.add(s.rank() == 0 ? x : source(s.withDim(-1, dim()), d));
                }
                yield l;
            }
            case ELEMENTWISE_FUSED -> {
                List<String> l = new ArrayList<>(List.of(x));
                for (int i = data.consumeInt(0, 2); i > 0; i--) {
                    l.add(data.consumeBoolean() ? sameShaped(xt) : source(broadcastable(s), d));
                }
                yield l;
            }
            case GATHER -> s.rank() == 0 ? null : List.of(x, ids(s.numel() == 0));
            // autodiff's ops: (x, dy) pairs, norm gradients with their weight, the loss with in-range targets
            case GELU_GRAD, SILU_GRAD, RELU_GRAD, SOFTMAX_GRAD -> List.of(x, sameShaped(xt));
            case RMS_NORM_GRAD, LAYER_NORM_GRAD -> {
                if (s.rank() == 0) {
                    yield null;
                }
                List<String> l = new ArrayList<>(List.of(x, source(Shape.of(s.last()), d), sameShaped(xt)));
                if (data.consumeBoolean()) {
                    l.add(sameShaped(xt)); // the residual form
                }
                yield l;
            }
            case NORM_WEIGHT_GRAD -> s.rank() == 0 ? null : List.of(x, sameShaped(xt));
            case CROSS_ENTROPY -> s.rank() == 0 || s.numel() == 0 ? null : List.of(x, targets(s));
            case CROSS_ENTROPY_GRAD -> s.rank() == 0 || s.numel() == 0 ? null : List.of(x, targets(s), source(Shape.scalar(), d));
            case SCATTER_ADD -> s.rank() == 0 ? null : List.of(x, ids(false));
            default -> List.of(x);
        };
    }

    /**
     * Gather ids: a constant of 0 or -1 (in range for any table, so a well-typed graph runs), i32 or
     * i64, of rank 0-2; none at all for a zero-size table, whose axis may have no row to pick.
     * Random run-time ids would mostly be out of range: GatherTest covers those.
     */
    private String ids(boolean emptyTable) {
        int rank = emptyTable ? 1 : data.consumeInt(0, 2);
        int[] dims = new int[rank];
        for (int i = 0; i < rank; i++) {
            dims[i] = emptyTable ? 0 : data.consumeInt(1, 4);
        }
        return add(Op.CONSTANT, List.of(), Attrs.of("value", data.consumeBoolean() ? 0.0 : -1.0),
                TensorType.of(data.consumeBoolean() ? DType.I64 : DType.I32, Shape.of(dims)));
    }

    /** Targets 0 (a class every row has) of the logits' shape without the last axis, i32 or i64. */
    private String targets(Shape logits) {
        int[] dims = java.util.Arrays.copyOf(logits.dims(), logits.rank() - 1);
        return add(Op.CONSTANT, List.of(), Attrs.of("value", 0.0), TensorType.of(data.consumeBoolean() ? DType.I64 : DType.I32, Shape.of(dims)));
    }

    private List<String> gemm(String a, TensorType at) {
        Shape s = at.shape();
        if (s.rank() < 2) {
            return null;
        }
        int n = dim();
        List<String> l = new ArrayList<>(List.of(a, source(Shape.of(s.dim(-1), n), at.dtype())));
        if (data.consumeBoolean()) {
            l.add(source(Shape.of(n), at.dtype())); // bias, when the attributes say so
        }
        for (int i = data.consumeInt(0, 2); i > 0; i--) {
            l.add(source(s.withDim(-1, n), at.dtype()));
        }
        return l;
    }

    private List<String> norm(Op op, String x, TensorType xt, boolean fused) {
        Shape s = xt.shape();
        if (s.rank() == 0) {
            return null;
        }
        List<String> l = new ArrayList<>(List.of(x));
        if (fused && data.consumeBoolean()) {
            l.add(sameShaped(xt));
        }
        l.add(source(Shape.of(s.last()), xt.dtype()));
        if (op != Op.RMS_NORM && data.consumeBoolean()) {
            l.add(source(Shape.of(s.last()), xt.dtype()));
        }
        return l;
    }

    private List<String> attention(TensorType xt) {
        int b = dim();
        int h = dim();
        int s = dim();
        int t = dim();
        int d = 2 * dim();
        DType dt = xt.dtype().isFloating() ? xt.dtype() : DType.F32;
        return List.of(source(Shape.of(b, h, s, d), dt), source(Shape.of(b, h, t, d), dt), source(Shape.of(b, h, t, dim()), dt));
    }

    private String sameShaped(TensorType t) {
        List<String> same = pool.entrySet().stream().filter(e -> e.getValue().shape().equals(t.shape()) && e.getValue().dtype() == t.dtype())
                .map(Map.Entry::getKey).toList();
        return same.isEmpty() || data.consumeBoolean() ? source(t.shape(), t.dtype()) : data.pickValue(same);
    }

    private Shape broadcastable(Shape s) {
        int[] d = s.dims();
        int drop = data.consumeInt(0, d.length);
        int[] out = Arrays.copyOfRange(d, drop, d.length);
        for (int i = 0; i < out.length; i++) {
            if (data.consumeInt(0, 3) == 0) {
                out[i] = 1;
            }
        }
        return Shape.of(out);
    }

    // --- attributes, from the spec

    private Attrs attrs(Op op, List<String> ins) {
        TreeMap<String, Object> m = new TreeMap<>();
        int rank = pool.get(ins.getFirst()).shape().rank();
        for (AttrSpec a : op.attrs()) {
            if (!a.required() && data.consumeInt(0, 2) == 0) {
                continue;
            }
            m.put(a.name(), hostile && data.consumeInt(0, 7) == 0 ? edgeValue(a) : value(op, a, ins, rank));
        }
        if (op == Op.GEMM) {
            m.put("bias", ins.size() > 2 && pool.get(ins.get(2)).shape().rank() == 1 && data.consumeBoolean());
        }
        if (op == Op.RMS_NORM_GRAD || op == Op.LAYER_NORM_GRAD) {
            m.put("residual", ins.size() > 3);
        }
        if (op == Op.FUSED_NORM) {
            m.put("residual", ins.size() > 2 && pool.get(ins.get(1)).shape().equals(pool.get(ins.getFirst()).shape()));
        }
        return new Attrs(m);
    }

    private Object value(Op op, AttrSpec a, List<String> ins, int rank) {
        Shape s = pool.get(ins.getFirst()).shape();
        if (!a.choices().isEmpty()) {
            return data.pickValue(a.choices());
        }
        return switch (a.name()) {
            case "to", "out" -> data.pickValue(List.of("f32", "bf16", "f16", "i32", "bool")).toString();
            case "perm", "out_perm" -> permutation(a.name().equals("out_perm") ? 4 : rank);
            case "shape" -> reshape(s);
            case "expr" -> expr(ins.size(), 0);
            case "axis", "dim0", "dim1" -> rank == 0 ? 0L : (long) data.consumeInt(-rank, rank - 1);
            case "start" -> (long) data.consumeInt(0, 3);
            case "end" -> (long) data.consumeInt(1, 8);
            case "size" -> (long) data.consumeInt(1, 4); // scatter_add: ids 0 and -1 are in range
            case "axes" -> {
                List<Long> axes = new ArrayList<>();
                for (int i = 0; i < rank; i++) {
                    if (data.consumeBoolean()) {
                        axes.add((long) (data.consumeBoolean() ? i : i - rank));
                    }
                }
                yield axes;
            }
            case "name" -> "n" + next;
            default -> switch (a.type()) {
                case "i" -> (long) data.consumeInt(0, 4);
                case "f" -> data.pickValue(List.of(1e-5, 0.125, 1.0, 10000.0, -2.5));
                case "b" -> data.consumeBoolean();
                case "s" -> "x";
                default -> List.of();
            };
        };
    }

    private Object edgeValue(AttrSpec a) {
        return switch (a.type()) {
            case "i" -> data.pickValue(List.of(-1L, 4294967297L, (long) Integer.MAX_VALUE, Long.MIN_VALUE, 1L << 40));
            case "f" -> data.pickValue(List.of(Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 0.0, -0.0, 1e308));
            case "b" -> data.consumeBoolean();
            case "s" -> data.pickValue(List.of("", "banana", "$99999999999", "neg(" + "neg(".repeat(300) + "$0" + ")".repeat(301),
                    "add($0, inf)", "nan", "cast_i32($0)", "f32"));
            default -> data.pickValue(List.of(List.of(), List.of(4294967304L), List.of(-1L, 2L), List.of(0L, 0L), List.of(1L << 31)));
        };
    }

    private List<Long> permutation(int rank) {
        List<Long> p = new ArrayList<>();
        for (long i = 0; i < rank; i++) {
            p.add(i);
        }
        for (int i = rank - 1; i > 0; i--) {
            int j = data.consumeInt(0, i);
            Long t = p.get(i);
            p.set(i, p.get(j));
            p.set(j, t);
        }
        return p;
    }

    /** A shape with the same element count: split or merge dims, or add 1s. */
    private List<Long> reshape(Shape s) {
        List<Long> out = new ArrayList<>();
        long n = s.numel();
        if (n == 0) {
            out.add(0L);
            out.add((long) dim());
            return out;
        }
        for (long f = 2; f <= 8 && n > 1; f++) {
            while (n % f == 0 && data.consumeBoolean()) {
                out.add(f);
                n /= f;
            }
        }
        out.add(n);
        if (data.consumeBoolean()) {
            out.add(data.consumeInt(0, out.size()), 1L);
        }
        return out;
    }

    /** A random expression over inputs $0..$(arity-1), reading each input at least once when it can. */
    private String expr(int arity, int depth) {
        if (depth > 3 || data.consumeInt(0, 3) == 0) {
            return data.consumeInt(0, 4) == 0
                    ? data.pickValue(List.of("0.5", "2.0", "-1.0", "inf", "-inf", "nan", "1.0E-30"))
                    : "$" + data.consumeInt(0, arity - 1);
        }
        String fn = data.pickValue(List.of("add", "sub", "mul", "div", "neg", "exp", "tanh", "relu", "silu", "gelu_tanh",
                "gelu_erf", "cast_f32", "cast_bf16", "cast_f16"));
        return ElementwiseExpr.arity(fn) == 2
                ? fn + "(" + expr(arity, depth + 1) + ", " + expr(arity, depth + 1) + ")"
                : fn + "(" + expr(arity, depth + 1) + ")";
    }

    /**
     * The fuzzer's bytes while they last, then a generator seeded from the first of them: a short
     * input still makes a whole graph (libFuzzer starts with inputs of a few bytes), and the
     * fuzzer's mutations of the leading bytes still steer the choices they feed.
     */
    private static final class Draw {
        private final FuzzedDataProvider data;
        private final java.util.SplittableRandom rest;

        Draw(FuzzedDataProvider data) {
            this.data = data;
            this.rest = new java.util.SplittableRandom(data.remainingBytes() >= 8 ? data.consumeLong() : data.remainingBytes());
        }

        int consumeInt(int lo, int hi) {
            return data.remainingBytes() > 0 ? data.consumeInt(lo, hi) : lo + (int) rest.nextLong((long) hi - lo + 1);
        }

        boolean consumeBoolean() {
            return data.remainingBytes() > 0 ? data.consumeBoolean() : rest.nextBoolean();
        }

        long consumeLong() {
            return data.remainingBytes() > 0 ? data.consumeLong() : rest.nextLong();
        }

        <T> T pickValue(java.util.Collection<T> from) {
            List<T> l = List.copyOf(from);
            return l.get(consumeInt(0, l.size() - 1));
        }

        <T> T pickValue(T[] from) {
            return from[consumeInt(0, from.length - 1)];
        }
    }

    // --- sources and nodes

    private int dim() {
        return hostile && data.consumeInt(0, 31) == 0 ? data.pickValue(List.of(0, 1, Integer.MAX_VALUE)) : data.consumeInt(1, 6);
    }

    private Shape shape(int minRank, int maxRank) {
        int[] d = new int[data.consumeInt(minRank, maxRank)];
        for (int i = 0; i < d.length; i++) {
            d[i] = dim();
        }
        return Shape.of(d);
    }

    private String source(Shape s, DType d) {
        Op op = data.pickValue(List.of(Op.INPUT, Op.PARAM, Op.PARAM));
        if (s.numel() == 1 && data.consumeInt(0, 3) == 0) {
            return add(Op.CONSTANT, List.of(), Attrs.of("value", data.pickValue(List.of(0.5, -2.0, 3.0, Double.POSITIVE_INFINITY))),
                    TensorType.of(d, s));
        }
        return add(op, List.of(), Attrs.of("name", "s" + next), TensorType.of(d, s));
    }

    private TensorType mangle(TensorType t) {
        long[] strides = new long[t.shape().rank()];
        for (int i = 0; i < strides.length; i++) {
            strides[i] = data.consumeInt(-1, 9);
        }
        return data.consumeBoolean() ? new TensorType(t.dtype(), t.shape(), Layout.strided(strides))
                : TensorType.of(data.pickValue(DType.values()), t.shape());
    }

    private String add(Op op, List<String> ins, Attrs attrs, TensorType t) {
        String name = Integer.toString(next++);
        nodes.add(new Node(name, op, ins, attrs, t));
        pool.put(name, t);
        return name;
    }
}
