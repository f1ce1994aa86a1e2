package dev.lantern.autodiff;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.ir.TensorType;
import dev.lantern.ir.TypeException;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Appends the backward nodes after a forward graph's: fresh SSA names that no forward value uses
 * ({@code d0, d1, ...}, skipping taken ones), each result type inferred from the op's spec, and the
 * small compositions that several rules share (sum back to a broadcast operand's shape, a
 * broadcast back out of a reduction, scalar constants).
 */
final class GradientBuilder {
    private final Map<String, TensorType> types = new HashMap<>();
    private final List<Node> added = new ArrayList<>();
    private int next;

    private final boolean flashAttention;

    GradientBuilder(Graph forward, boolean flashAttention) {
        this.flashAttention = flashAttention;
        for (Node n : forward.nodes()) {
            types.put(n.name(), n.type());
        }
    }

    /** Whether attention's rule may emit the flash backward ops (Gradients.Options). */
    boolean flashAttention() {
        return flashAttention;
    }

    /** The nodes emitted so far, in order. */
    List<Node> nodes() {
        return added;
    }

    TensorType type(String value) {
        return types.get(value);
    }

    Shape shape(String value) {
        return types.get(value).shape();
    }

    /** Appends {@code op(inputs) {attrs}} with its inferred type; returns its name. */
    String op(Op op, Attrs attrs, String... inputs) {
        List<TensorType> in = Arrays.stream(inputs).map(types::get).toList();
        TensorType t;
        try {
            t = op.infer(in, attrs);
        } catch (TypeException e) {
            Node bad = new Node(fresh(), op, List.of(inputs), attrs, in.isEmpty() ? TensorType.of(DType.F32) : in.getFirst());
            throw new GradientException(bad, "the backward node is ill-typed (a gradient rule is wrong): " + e.getMessage());
        }
        return add(new Node(fresh(), op, List.of(inputs), attrs, t));
    }

    /** {@code value} filled over {@code type}. */
    String constant(double value, TensorType type) {
        return add(new Node(fresh(), Op.CONSTANT, List.of(), Attrs.of("value", value), type.contiguous()));
    }

    /** A scalar constant of {@code dtype}, for elementwise arithmetic with a tensor. */
    String scalar(double value, DType dtype) {
        return constant(value, TensorType.of(dtype));
    }

    String add(String a, String b) {
        return op(Op.ADD, Attrs.EMPTY, a, b);
    }

    String mul(String a, String b) {
        return op(Op.MUL, Attrs.EMPTY, a, b);
    }

    String neg(String a) {
        return op(Op.NEG, Attrs.EMPTY, a);
    }

    String reshape(String a, Shape s) {
        return shape(a).equals(s) ? a : op(Op.RESHAPE, Attrs.of("shape", s.dims()), a);
    }

    /**
     * {@code value} summed down to {@code target}, the shape of an operand that NumPy broadcasting
     * stretched: over the leading axes the operand lacks and over its size-1 axes that the result
     * has wider. One reduce_sum (keepdims) and a reshape; nothing when the shapes are equal.
     */
    String sumTo(String value, Shape target) {
        Shape s = shape(value);
        if (s.equals(target)) {
            return value;
        }
        int lead = s.rank() - target.rank();
        List<Integer> axes = new ArrayList<>();
        for (int i = 0; i < s.rank(); i++) {
            if (i < lead || target.dim(i - lead) == 1 && s.dim(i) != 1) {
                axes.add(i);
            }
        }
        String summed = axes.isEmpty() ? value
                : op(Op.REDUCE_SUM, Attrs.of("axes", axes.stream().mapToInt(Integer::intValue).toArray(), "keepdims", true), value);
        return reshape(summed, target);
    }

    /** {@code value} (whose shape broadcasts to {@code target}) repeated over {@code target}: added to zeros. */
    String broadcastTo(String value, TensorType target) {
        if (shape(value).equals(target.shape())) {
            return value;
        }
        return add(constant(0.0, target.withDtype(type(value).dtype())), value);
    }

    private String add(Node n) {
        added.add(n);
        types.put(n.name(), n.type());
        return n.name();
    }

    private String fresh() {
        String name;
        do {
            name = "d" + next++;
        } while (types.containsKey(name));
        return name;
    }
}
