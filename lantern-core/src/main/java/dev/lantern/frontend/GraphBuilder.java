package dev.lantern.frontend;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.LanternException;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.ir.TensorType;
import dev.lantern.ir.TypeException;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds a {@link Graph} one primitive op at a time, inferring each result type from the op's
 * spec. Values are named %0, %1, ... in order; inputs and parameters keep their own names.
 * A shape error is thrown at the call that causes it, with the node it would have built.
 */
public final class GraphBuilder {
    private final String name;
    private final List<Node> nodes = new ArrayList<>();
    private final Map<String, ParamInit> inits = new LinkedHashMap<>();
    private int next;

    public GraphBuilder(String name) {
        this.name = name;
    }

    public Value input(String inputName, TensorType type) {
        return add(new Node(sanitize(inputName), Op.INPUT, List.of(), Attrs.of("name", inputName), type));
    }

    public Value param(String paramName, TensorType type, ParamInit init) {
        if (inits.containsKey(paramName)) {
            throw new LanternException("parameter " + paramName + " is defined twice");
        }
        inits.put(paramName, init);
        return add(new Node(sanitize(paramName), Op.PARAM, List.of(), Attrs.of("name", paramName), type));
    }

    public Value constant(double value, DType dtype) {
        return add(new Node(fresh(), Op.CONSTANT, List.of(), Attrs.of("value", value), TensorType.of(dtype)));
    }

    /** {@code value} filled over {@code shape} (a constant is one value: passes can read it, unlike a param's data). */
    public Value constant(double value, DType dtype, Shape shape) {
        return add(new Node(fresh(), Op.CONSTANT, List.of(), Attrs.of("value", value), TensorType.of(dtype, shape)));
    }

    /** Appends {@code op(inputs) {attrs}} with its inferred type. */
    public Value op(Op op, Attrs attrs, Value... inputs) {
        List<TensorType> types = Arrays.stream(inputs).map(Value::type).toList();
        List<String> names = Arrays.stream(inputs).map(Value::name).toList();
        TensorType t;
        try {
            t = op.infer(types, attrs);
        } catch (TypeException e) {
            Node bad = new Node(Integer.toString(next), op, names, attrs, types.getFirst());
            throw new LanternException(bad.toString().replaceFirst(" : .*$", "") + ": " + e.getMessage(), e);
        }
        return add(new Node(fresh(), op, names, attrs, t));
    }

    public Value matmul(Value a, Value b) {
        return op(Op.MATMUL, Attrs.EMPTY, a, b);
    }

    public Value matmulNT(Value a, Value b) {
        return op(Op.MATMUL, Attrs.of("transpose_b", true), a, b);
    }

    public Value add(Value a, Value b) {
        return op(Op.ADD, Attrs.EMPTY, a, b);
    }

    public Value mul(Value a, Value b) {
        return op(Op.MUL, Attrs.EMPTY, a, b);
    }

    public Value gelu(Value x, boolean tanh) {
        return op(Op.GELU, Attrs.of("approximate", tanh ? "tanh" : "none"), x);
    }

    public Value softmax(Value x, boolean causal, double scale) {
        return op(Op.SOFTMAX, Attrs.of("causal", causal, "scale", scale), x);
    }

    public Value layerNorm(Value x, Value w, Value b, double eps) {
        return op(Op.LAYER_NORM, Attrs.of("eps", eps), x, w, b);
    }

    public Value rmsNorm(Value x, Value w, double eps) {
        return op(Op.RMS_NORM, Attrs.of("eps", eps), x, w);
    }

    public Value rope(Value x, double base) {
        return op(Op.ROPE, Attrs.of("base", base), x);
    }

    /** The sum of {@code x} over {@code axes} (dropped from the shape): {@code reduce_sum {axes}}. */
    public Value reduceSum(Value x, int... axes) {
        return op(Op.REDUCE_SUM, Attrs.of("axes", axes), x);
    }

    /** The mean cross-entropy of {@code logits} (..., V) at integer {@code targets} (...): a scalar loss. */
    public Value crossEntropy(Value logits, Value targets) {
        return op(Op.CROSS_ENTROPY, Attrs.EMPTY, logits, targets);
    }

    public Value reshape(Value x, int... shape) {
        return op(Op.RESHAPE, Attrs.of("shape", shape), x);
    }

    public Value permute(Value x, int... perm) {
        return op(Op.PERMUTE, Attrs.of("perm", perm), x);
    }

    public Value cast(Value x, DType to) {
        return op(Op.CAST, Attrs.of("to", to.text()), x);
    }

    public Graph build(Value... outputs) {
        return new Graph(name, nodes, Arrays.stream(outputs).map(Value::name).toList());
    }

    public Model buildModel(Value... outputs) {
        return new Model(build(outputs), inits);
    }

    private Value add(Node n) {
        nodes.add(n);
        return new Value(n.name(), n.type());
    }

    private String fresh() {
        return Integer.toString(next++);
    }

    /** Parameter names such as "attn.wq" are valid SSA names; anything else becomes '_'. */
    private static String sanitize(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            b.append(Character.isLetterOrDigit(c) || c == '_' || c == '.' ? c : '_');
        }
        return b.toString();
    }
}
