package dev.lantern.autodiff;

import dev.lantern.cpu.BinaryFn;
import dev.lantern.cpu.EagerExecutor;
import dev.lantern.frontend.GraphBuilder;
import dev.lantern.frontend.Value;
import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IndexOutOfRangeException;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.ir.TensorType;
import dev.lantern.reference.Accuracy;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The CPU kernels of the ops with integer operands (cross_entropy, its gradient, scatter_add) against
 * the float64 reference on seeded inputs, outputs poisoned first; a bad target is a typed error.
 */
class GradKernelTest {
    static Tensor ints(DType d, Shape s, long... v) {
        Tensor t = Tensor.allocate(d, s);
        for (int i = 0; i < v.length; i++) {
            t.set(i, v[i]);
        }
        return t;
    }

    static void matches(Graph g, Map<String, Tensor> in, double tol) {
        double[] ref = ReferenceInterpreter.run(g, in).get(g.outputs().getFirst()).data();
        double[] got = new EagerExecutor(true).run(g, in).get(g.outputs().getFirst()).toDoubles();
        assertTrue(Accuracy.relErr(got, ref) <= tol, "rel err " + Accuracy.relErr(got, ref));
    }

    @Test
    void crossEntropyAndItsGradient() {
        for (DType td : new DType[] {DType.I32, DType.I64}) {
            GraphBuilder g = new GraphBuilder("ce");
            Value logits = g.input("logits", TensorType.of(DType.F32, 3, 5, 37));
            Value t = g.input("t", TensorType.of(td, 3, 5));
            Value d = g.input("d", TensorType.of(DType.F32));
            Value loss = g.op(Op.CROSS_ENTROPY, Attrs.of("ignore_index", 7), logits, t);
            Value grad = g.op(Op.CROSS_ENTROPY_GRAD, Attrs.of("ignore_index", 7), logits, t, d);
            Tensor lt = Philox.normal(Tensor.allocate(DType.F32, Shape.of(3, 5, 37)), 3, 2f);
            Tensor tt = ints(td, Shape.of(3, 5), 0, 36, 7, 5, 9, 12, 7, 1, 30, 2, 2, 0, 35, 17, 8);
            Tensor dt = Tensor.of(DType.F32, Shape.scalar(), new float[] {1.7f});
            Map<String, Tensor> in = Map.of("logits", lt, "t", tt, "d", dt);
            matches(g.build(loss), in, 1e-6);
            matches(g.build(grad), in, 1e-6);
            Tensor bad = ints(td, Shape.of(3, 5), 0, 36, 37, 5, 9, 12, 7, 1, 30, 2, 2, 0, 35, 17, 8);
            Map<String, Tensor> badIn = Map.of("logits", lt, "t", bad, "d", dt);
            assertThrows(IndexOutOfRangeException.class, () -> new EagerExecutor().run(g.build(loss), badIn));
            assertThrows(IndexOutOfRangeException.class, () -> ReferenceInterpreter.run(g.build(loss), badIn));
        }
    }

    /** The gradient functions' vector loops give the scalar form's bits (the scalar path and tails use it). */
    @Test
    void gradientFunctionsVectorAndScalarAgreeBitForBit() {
        float[] x = new float[1029];
        float[] dy = new float[x.length];
        java.util.SplittableRandom r = new java.util.SplittableRandom(9);
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) (r.nextDouble(-6, 6));
            dy[i] = (float) r.nextDouble(-2, 2);
        }
        x[0] = 0f;
        x[1] = -0f;
        x[2] = Float.NaN;
        for (BinaryFn f : new BinaryFn[] {BinaryFn.GELU_TANH_GRAD, BinaryFn.GELU_ERF_GRAD, BinaryFn.SILU_GRAD, BinaryFn.RELU_GRAD}) {
            float[] out = new float[x.length];
            f.apply(x, dy, out, x.length);
            for (int i = 0; i < x.length; i++) {
                assertEquals(Float.floatToIntBits(f.apply(x[i], dy[i])), Float.floatToIntBits(out[i]), f + " at x=" + x[i]);
            }
        }
    }

    @Test
    void scatterAddSumsRepeatedRowsInIdOrder() {
        GraphBuilder g = new GraphBuilder("sa");
        Value u = g.input("u", TensorType.of(DType.F32, 3, 9, 5));
        Value ids = g.input("ids", TensorType.of(DType.I64, 9));
        Graph graph = g.build(g.op(Op.SCATTER_ADD, Attrs.of("axis", 1, "size", 6), u, ids));
        Map<String, Tensor> in = Map.of("u", Philox.normal(Tensor.allocate(DType.F32, Shape.of(3, 9, 5)), 5, 1f),
                "ids", ints(DType.I64, Shape.of(9), 2, 0, 2, 5, -1, 2, 0, 3, 5));
        matches(graph, in, 1e-6);
        // each row sums in id order in double, as the reference does: equal to its rounding, bit for bit,
        // which no thread split could give if the order depended on it
        float[] got = new float[3 * 6 * 5];
        Tensor out = new EagerExecutor().run(graph, in).values().iterator().next();
        for (int i = 0; i < got.length; i++) {
            got[i] = out.get(i);
        }
        assertArrayEquals(ReferenceInterpreter.run(graph, in).values().iterator().next().toFloats(), got, 0f);
        Map<String, Tensor> bad = Map.of("u", in.get("u"), "ids", ints(DType.I64, Shape.of(9), 2, 0, 2, 6, 1, 2, 0, 3, 5));
        assertThrows(IndexOutOfRangeException.class, () -> new EagerExecutor().run(graph, bad));
    }
}
