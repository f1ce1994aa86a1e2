package dev.lantern.cpu;

import dev.lantern.frontend.GraphBuilder;
import dev.lantern.frontend.Value;
import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.ir.TensorType;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One differential case: a single op on inputs of given shapes and dtype, drawn from a seed.
 * Inputs are normals (never all zeros); {@code positive} inputs are uniform in [0.5, 2) (for div).
 */
record OpCase(Op op, Attrs attrs, DType dtype, List<Shape> shapes, boolean positiveSecond) {
    static OpCase of(Op op, Attrs attrs, DType dtype, int[]... shapes) {
        return new OpCase(op, attrs, dtype, java.util.Arrays.stream(shapes).map(Shape::of).toList(), false);
    }

    OpCase positive() {
        return new OpCase(op, attrs, dtype, shapes, true);
    }

    /** The one-op graph: inputs x0, x1, ... of this case's shapes. */
    Graph graph() {
        GraphBuilder g = new GraphBuilder("case");
        List<Value> ins = new ArrayList<>();
        for (int i = 0; i < shapes.size(); i++) {
            ins.add(g.input("x" + i, TensorType.of(dtype, shapes.get(i))));
        }
        if (op == Op.CONSTANT) {
            // a constant has no inputs: add it to x0 so that the graph has a real output too
            Value c = g.op(Op.MUL, Attrs.EMPTY, ins.getFirst(), g.constant(attrs.getDouble("value", 0), dtype));
            return g.build(c);
        }
        Value out = g.op(op, attrs, ins.toArray(Value[]::new));
        return g.build(out);
    }

    Map<String, Tensor> inputs(long seed) {
        Map<String, Tensor> m = new LinkedHashMap<>();
        for (int i = 0; i < shapes.size(); i++) {
            Tensor t = Tensor.allocate(dtype, shapes.get(i));
            long key = Philox.key(seed, "x" + i);
            if (positiveSecond && i == 1) {
                Philox.uniform(t, key, 0.5f, 2f);
            } else {
                Philox.normal(t, key, 1f);
            }
            m.put("x" + i, t);
        }
        return m;
    }

    /** The node that computes the op (the last one). */
    Node node(Graph g) {
        return g.node(g.outputs().getFirst());
    }

    @Override
    public String toString() {
        return op.text() + attrs + " " + dtype + shapes;
    }
}
