package dev.lantern.reference;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.Graph;
import dev.lantern.ir.LanternException;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.ir.TensorType;
import dev.lantern.tensor.Tensor;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The float64 oracle of every numeric test: runs any {@link Graph} op by op with plain loops.
 *
 * <p>Inputs and parameters come from a map keyed by the node's {@code name} attribute. A source
 * whose type is strided ({@code f32[4,8]@[1,4]}) reads its tensor's segment at those element
 * strides, as a view; every other value is computed in logical row-major order, so view ops are
 * plain index maps here. Values stay float64 throughout, whatever the dtype; only {@code cast}
 * rounds (to the target dtype), because rounding is what a cast means.
 */
public final class ReferenceInterpreter {
    private ReferenceInterpreter() {}

    /** The graph's outputs, by output SSA name in {@code graph.outputs()} order. */
    public static Map<String, RefTensor> run(Graph graph, Map<String, Tensor> inputsAndParams) {
        Map<String, RefTensor> all = runAll(graph, inputsAndParams);
        Map<String, RefTensor> out = new LinkedHashMap<>();
        for (String o : graph.outputs()) {
            out.put(o, all.get(o));
        }
        return out;
    }

    /**
     * The graph's outputs from float64 sources (by name attribute, contiguous), for checks that must
     * not round their inputs to f32 first, such as central finite differences of a gradient.
     */
    public static Map<String, RefTensor> runExact(Graph graph, Map<String, RefTensor> inputsAndParams) {
        Map<String, RefTensor> all = runAll(graph, n -> {
            RefTensor t = inputsAndParams.get(n.attrs().getString("name", n.name()));
            if (t == null || !t.shape().equals(n.type().shape())) {
                throw new LanternException("reference: " + n + " needs a float64 tensor of shape " + n.type().shape() + ", given " + t);
            }
            return t;
        });
        Map<String, RefTensor> out = new LinkedHashMap<>();
        for (String o : graph.outputs()) {
            out.put(o, all.get(o));
        }
        return out;
    }

    /** Every value of the graph, by SSA name, in graph order. */
    public static Map<String, RefTensor> runAll(Graph graph, Map<String, Tensor> inputsAndParams) {
        return runAll(graph, n -> load(n, inputsAndParams));
    }

    private static Map<String, RefTensor> runAll(Graph graph, java.util.function.Function<Node, RefTensor> sources) {
        Map<String, RefTensor> env = new LinkedHashMap<>();
        for (Node n : graph.nodes()) {
            List<RefTensor> in = new ArrayList<>(n.inputs().size());
            for (String name : n.inputs()) {
                in.add(env.get(name));
            }
            try {
                // a zero-size value has nothing to compute (and row counts of zero would divide by zero)
                boolean empty = n.type().shape().numel() == 0 && !n.op().isSource();
                env.put(n.name(), empty ? RefTensor.zeros(n.type().shape())
                        : n.op() == Op.INPUT || n.op() == Op.PARAM ? sources.apply(n) : eval(n, in, Map.of()));
            } catch (RuntimeException e) {
                if (e instanceof LanternException) {
                    throw e;
                }
                throw new LanternException("reference: " + n + ": " + e, e);
            }
        }
        return env;
    }

    /** One node's value from its inputs' values. */
    public static RefTensor eval(Node n, List<RefTensor> in, Map<String, Tensor> sources) {
        Attrs a = n.op().withDefaults(n.attrs());
        Shape out = n.type().shape();
        return switch (n.op()) {
            case INPUT, PARAM -> load(n, sources);
            case CONSTANT -> {
                RefTensor t = RefTensor.zeros(out);
                java.util.Arrays.fill(t.data(), RefOps.castValue(a.getDouble("value", 0), n.type().dtype()));
                yield t;
            }
            case ADD -> RefOps.binary(in.get(0), in.get(1), out, Double::sum);
            case SUB -> RefOps.binary(in.get(0), in.get(1), out, (x, y) -> x - y);
            case MUL -> RefOps.binary(in.get(0), in.get(1), out, (x, y) -> x * y);
            case DIV -> RefOps.binary(in.get(0), in.get(1), out, (x, y) -> x / y);
            case GELU -> RefOps.unary(in.getFirst(), "none".equals(a.getString("approximate", "tanh"))
                    ? RefMath::geluErf : RefMath::geluTanh);
            case RELU -> RefOps.unary(in.getFirst(), x -> Math.max(x, 0.0)); // NaN stays NaN, as in PyTorch
            case SILU -> RefOps.unary(in.getFirst(), RefMath::silu);
            case NEG -> RefOps.unary(in.getFirst(), x -> -x);
            case EXP -> RefOps.unary(in.getFirst(), Math::exp);
            case TANH -> RefOps.unary(in.getFirst(), Math::tanh);
            case CAST -> RefOps.unary(in.getFirst(), x -> RefOps.castValue(x, n.type().dtype()));
            case SOFTMAX -> RefOps.softmax(in.getFirst(), a.getDouble("scale", 1), a.getBool("causal", false));
            case LAYER_NORM -> RefOps.layerNorm(in.get(0), in.get(1), in.size() > 2 ? in.get(2) : null, a.getDouble("eps", 1e-5));
            case RMS_NORM -> RefOps.rmsNorm(in.get(0), in.get(1), a.getDouble("eps", 1e-6));
            case ROPE -> RefOps.rope(in.getFirst(), a.getDouble("base", 10000), a.getLong("offset", 0), a.getBool("inverse", false));
            case GELU_GRAD -> RefOps.binary(in.get(0), in.get(1), out, "none".equals(a.getString("approximate", "tanh"))
                    ? (x, dy) -> dy * RefMath.geluErfGrad(x) : (x, dy) -> dy * RefMath.geluTanhGrad(x));
            case SILU_GRAD -> RefOps.binary(in.get(0), in.get(1), out, (x, dy) -> dy * RefMath.siluGrad(x));
            case RELU_GRAD -> RefOps.binary(in.get(0), in.get(1), out, (x, dy) -> x > 0 ? dy : 0);
            case SOFTMAX_GRAD -> GradRef.softmaxGrad(in.get(0), in.get(1), a.getDouble("scale", 1));
            case RMS_NORM_GRAD -> GradRef.normGrad(in.get(0), in.get(1), in.get(2), in.size() > 3 ? in.get(3) : null,
                    a.getDouble("eps", 1e-6), false);
            case LAYER_NORM_GRAD -> GradRef.normGrad(in.get(0), in.get(1), in.get(2), in.size() > 3 ? in.get(3) : null,
                    a.getDouble("eps", 1e-5), true);
            case REDUCE_SUM -> {
                int rank = in.getFirst().shape().rank();
                boolean[] reduced = new boolean[rank];
                for (int ax : a.getInts("axes")) {
                    reduced[axis(ax, rank)] = true;
                }
                yield GradRef.reduceSum(in.getFirst(), reduced, out);
            }
            case CROSS_ENTROPY -> GradRef.crossEntropy(in.get(0), in.get(1), a.getLong("ignore_index", -100));
            case CROSS_ENTROPY_GRAD -> GradRef.crossEntropyGrad(in.get(0), in.get(1), in.get(2), a.getLong("ignore_index", -100));
            case ATTENTION_LSE -> AttentionGradRef.lse(in.get(0), in.get(1), in.size() > 2 ? in.get(2) : null,
                    a.getDouble("scale", 1), a.getBool("causal", false));
            case ATTENTION_GRAD_Q, ATTENTION_GRAD_KV -> AttentionGradRef.grad(in.get(0), in.get(1), in.get(2), in.get(3), in.get(4),
                    in.get(5), in.size() > 6 ? in.get(6) : null, a.getDouble("scale", 1), a.getBool("causal", false),
                    n.op() == Op.ATTENTION_GRAD_KV);
            case SCATTER_ADD -> GradRef.scatterAdd(in.get(0), in.get(1), axis(a.getInt("axis", 0), out.rank()), out);
            case MATMUL -> RefOps.matmul(in.get(0), in.get(1), a.getBool("transpose_a", false), a.getBool("transpose_b", false), out);
            case RESHAPE -> new RefTensor(out, in.getFirst().data());
            case PERMUTE -> RefOps.permute(in.getFirst(), a.getInts("perm"), out);
            case TRANSPOSE -> {
                int rank = out.rank();
                int[] perm = new int[rank];
                for (int i = 0; i < rank; i++) {
                    perm[i] = i;
                }
                int d0 = axis(a.getInt("dim0", 0), rank);
                int d1 = axis(a.getInt("dim1", 0), rank);
                perm[d0] = d1;
                perm[d1] = d0;
                yield RefOps.permute(in.getFirst(), perm, out);
            }
            case SLICE -> RefOps.slice(in.getFirst(), axis(a.getInt("axis", 0), out.rank()), a.getInt("start", 0), out);
            case CONCAT -> RefOps.concat(in, axis(a.getInt("axis", 0), out.rank()), out);
            case GATHER -> RefOps.gather(in.get(0), in.get(1), axis(a.getInt("axis", 0), in.get(0).shape().rank()), out);
            // ops that fusion makes (passes' branch): the primitive ops they replace
            case ATTENTION -> CompositeRef.attention(n, in, a);
            case GEMM -> CompositeRef.gemm(n, in, a);
            case FUSED_NORM -> CompositeRef.fusedNorm(n, in, a);
            case NORM_WEIGHT_GRAD -> CompositeRef.normWeightGrad(n, in, a);
            case ELEMENTWISE_FUSED -> CompositeRef.elementwise(n, in, a);
        };
    }

    /** A source's tensor, read at the strides its type declares (contiguous unless it says otherwise). */
    static RefTensor load(Node n, Map<String, Tensor> sources) {
        String key = n.attrs().getString("name", n.name());
        Tensor t = sources.get(key);
        if (t == null) {
            throw new LanternException("reference: no tensor given for " + n.op().text() + " \"" + key + "\" (" + n + ")");
        }
        TensorType type = n.type();
        Shape shape = type.shape();
        if (type.layout().isContiguous()) {
            if (t.numel() != shape.numel()) {
                throw new LanternException("reference: tensor \"" + key + "\" is " + t + ", expected " + type);
            }
            return new RefTensor(shape, t.toDoubles());
        }
        long[] strides = type.layout().strides(shape);
        int[] dims = shape.dims();
        double[] data = new double[Math.toIntExact(shape.numel())];
        int[] idx = new int[dims.length];
        for (int i = 0; i < data.length; i++) {
            long off = 0;
            for (int d = 0; d < dims.length; d++) {
                off += idx[d] * strides[d];
            }
            if (off >= t.numel()) {
                throw new LanternException("reference: strided " + type + " reads element " + off + " beyond tensor \"" + key + "\" " + t);
            }
            data[i] = t.get(off);
            RefOps.increment(idx, dims);
        }
        return new RefTensor(shape, data);
    }

    /** An axis in [-rank, rank) made non-negative (the type rule has already range-checked it). */
    static int axis(int axis, int rank) {
        return axis < 0 ? axis + rank : axis;
    }
}
