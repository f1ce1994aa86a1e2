package dev.lantern.autodiff;

import dev.lantern.frontend.GraphBuilder;
import dev.lantern.frontend.Value;
import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.ir.TensorType;
import dev.lantern.reference.RefTensor;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A gradient check per op (and per rule branch: broadcasting, transposes, causal, grouped heads),
 * in float64 on the reference interpreter against central finite differences: relative error
 * ≤ 1e-6 on seeded normal inputs of odd shapes. Each case is {@code loss = Σ op(...) · r}, with r a
 * seeded input of the op's result shape (so dy is random, not ones), differentiated with respect
 * to every floating input of the op.
 */
class GradientCheckTest {
    static final DType F = DType.F32;

    /** One case: its name, the op under test built from its inputs, and the inputs' shapes. */
    record Case(String name, BiFunction<GraphBuilder, List<Value>, Value> op, List<Shape> shapes, Map<String, RefTensor> ints) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Case c(String name, BiFunction<GraphBuilder, List<Value>, Value> op, int[]... shapes) {
        return new Case(name, op, Stream.of(shapes).map(Shape::of).toList(), Map.of());
    }

    static int[] s(int... d) {
        return d;
    }

    static BiFunction<GraphBuilder, List<Value>, Value> op(Op op, Attrs a) {
        return (g, in) -> g.op(op, a, in.toArray(Value[]::new));
    }

    static Stream<Case> cases() {
        List<Case> l = new ArrayList<>();
        l.add(c("add", op(Op.ADD, Attrs.EMPTY), s(3, 5, 7), s(3, 5, 7)));
        l.add(c("add broadcast", op(Op.ADD, Attrs.EMPTY), s(3, 5, 7), s(5, 1)));
        l.add(c("sub broadcast", op(Op.SUB, Attrs.EMPTY), s(7), s(3, 5, 7)));
        l.add(c("mul broadcast", op(Op.MUL, Attrs.EMPTY), s(3, 1, 7), s(5, 7)));
        l.add(c("div", (g, in) -> g.op(Op.DIV, Attrs.EMPTY, in.get(0), in.get(1)), s(3, 5, 7), s(3, 1, 7)));
        l.add(c("neg", op(Op.NEG, Attrs.EMPTY), s(3, 5, 7)));
        l.add(c("exp", op(Op.EXP, Attrs.EMPTY), s(3, 5, 7)));
        l.add(c("tanh", op(Op.TANH, Attrs.EMPTY), s(3, 5, 7)));
        l.add(c("gelu tanh", op(Op.GELU, Attrs.of("approximate", "tanh")), s(3, 5, 7)));
        l.add(c("gelu erf", op(Op.GELU, Attrs.of("approximate", "none")), s(3, 5, 7)));
        l.add(c("silu", op(Op.SILU, Attrs.EMPTY), s(3, 5, 7)));
        l.add(c("relu", op(Op.RELU, Attrs.EMPTY), s(3, 5, 7)));
        l.add(c("softmax", op(Op.SOFTMAX, Attrs.of("scale", 0.7)), s(3, 5, 7)));
        l.add(c("softmax causal", op(Op.SOFTMAX, Attrs.of("causal", true, "scale", 1.3)), s(2, 5, 7)));
        l.add(c("layer_norm", op(Op.LAYER_NORM, Attrs.of("eps", 1e-5)), s(3, 5, 7), s(7), s(7)));
        l.add(c("layer_norm no bias", op(Op.LAYER_NORM, Attrs.of("eps", 1e-3)), s(5, 7), s(7)));
        l.add(c("rms_norm", op(Op.RMS_NORM, Attrs.of("eps", 1e-6)), s(3, 5, 7), s(7)));
        l.add(c("rope", op(Op.ROPE, Attrs.of("base", 100.0)), s(2, 3, 5, 6)));
        l.add(c("rope offset inverse", op(Op.ROPE, Attrs.of("base", 50.0, "offset", 3, "inverse", true)), s(1, 3, 5, 8)));
        l.add(c("matmul", op(Op.MATMUL, Attrs.EMPTY), s(3, 5, 7), s(7, 4)));
        l.add(c("matmul ta", op(Op.MATMUL, Attrs.of("transpose_a", true)), s(3, 7, 5), s(3, 7, 4)));
        l.add(c("matmul tb", op(Op.MATMUL, Attrs.of("transpose_b", true)), s(2, 3, 5, 7), s(4, 7)));
        l.add(c("matmul ta tb broadcast", op(Op.MATMUL, Attrs.of("transpose_a", true, "transpose_b", true)), s(2, 1, 7, 5), s(3, 4, 7)));
        l.add(c("reshape", op(Op.RESHAPE, Attrs.of("shape", s(7, 15))), s(3, 5, 7)));
        l.add(c("permute", op(Op.PERMUTE, Attrs.of("perm", s(2, 0, 1))), s(3, 5, 7)));
        l.add(c("transpose", op(Op.TRANSPOSE, Attrs.of("dim0", 0, "dim1", -1)), s(3, 5, 7)));
        l.add(c("slice middle", op(Op.SLICE, Attrs.of("axis", 1, "start", 1, "end", 4)), s(3, 5, 7)));
        l.add(c("slice head", op(Op.SLICE, Attrs.of("axis", -1, "start", 0, "end", 2)), s(3, 5, 7)));
        l.add(c("concat", op(Op.CONCAT, Attrs.of("axis", 1)), s(3, 2, 7), s(3, 5, 7), s(3, 1, 7)));
        l.add(c("reduce_sum", op(Op.REDUCE_SUM, Attrs.of("axes", s(0, 2))), s(3, 5, 7)));
        l.add(c("reduce_sum keepdims", op(Op.REDUCE_SUM, Attrs.of("axes", s(-1), "keepdims", true)), s(3, 5, 7)));
        l.add(new Case("gather repeated ids", (g, in) -> g.op(Op.GATHER, Attrs.of("axis", 0), in.get(0), in.get(1)),
                List.of(Shape.of(5, 7), Shape.of(2, 3)), Map.of("x1", GradCheck.ints(Shape.of(2, 3), 4, 1, 4, 0, -1, 1))));
        l.add(new Case("gather axis 1", (g, in) -> g.op(Op.GATHER, Attrs.of("axis", 1), in.get(0), in.get(1)),
                List.of(Shape.of(3, 5, 7), Shape.of(4)), Map.of("x1", GradCheck.ints(Shape.of(4), 2, 2, 0, 3))));
        l.add(new Case("scatter_add", (g, in) -> g.op(Op.SCATTER_ADD, Attrs.of("axis", 0, "size", 5), in.get(0), in.get(1)),
                List.of(Shape.of(4, 7), Shape.of(4)), Map.of("x1", GradCheck.ints(Shape.of(4), 1, 3, 1, 0))));
        l.add(new Case("cross_entropy ignore_index", (g, in) -> g.op(Op.CROSS_ENTROPY, Attrs.of("ignore_index", -1), in.get(0), in.get(1)),
                List.of(Shape.of(3, 5, 7), Shape.of(3, 5)),
                Map.of("x1", GradCheck.ints(Shape.of(3, 5), 0, 6, 3, -1, 2, 2, 5, 1, 0, 4, -1, 6, 6, 3, 1))));
        l.add(c("attention", op(Op.ATTENTION, Attrs.of("scale", 0.4)), s(2, 2, 5, 4), s(2, 2, 3, 4), s(2, 2, 3, 3)));
        l.add(c("attention causal gqa rope out_perm", op(Op.ATTENTION, Attrs.of("causal", true, "scale", 0.5, "rope", true,
                "rope_base", 100.0, "out_perm", s(0, 2, 1, 3))), s(1, 4, 5, 4), s(1, 2, 5, 4), s(1, 2, 5, 3)));
        l.add(c("attention mask", op(Op.ATTENTION, Attrs.of("scale", 0.3)), s(2, 2, 3, 4), s(2, 2, 5, 4), s(2, 2, 5, 3), s(2, 1, 1, 5)));
        return l.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void matchesFiniteDifferences(Case c) {
        GraphBuilder g = new GraphBuilder("case");
        List<Value> in = new ArrayList<>();
        List<String> wrt = new ArrayList<>();
        for (int i = 0; i < c.shapes().size(); i++) {
            String name = "x" + i;
            boolean integer = c.ints().containsKey(name);
            Value v = g.input(name, TensorType.of(integer ? DType.I64 : F, c.shapes().get(i)));
            in.add(v);
            if (!integer) {
                wrt.add(v.name());
            }
        }
        Value y = c.op().apply(g, in);
        Value r = g.input("r", TensorType.of(F, y.shape()));
        Value loss = g.op(Op.REDUCE_SUM, Attrs.of("axes", allAxes(y.shape().rank())), g.mul(y, r));
        Graph forward = g.build(loss);
        Map<String, RefTensor> src = GradCheck.copy(GradCheck.sources(forward, 42 + c.name().hashCode(), c.ints()));
        GradCheck.Result res = GradCheck.check(forward, loss.name(), wrt, src);
        assertEquals(res.forwardLoss(), res.loss(), 1e-12 * Math.max(1, Math.abs(res.loss())), "the backward graph's loss");
        assertTrue(res.worst() <= 1e-6, c.name() + ":\n" + res.report());
    }

    static int[] allAxes(int rank) {
        int[] a = new int[rank];
        for (int i = 0; i < rank; i++) {
            a[i] = i;
        }
        return a;
    }
}
