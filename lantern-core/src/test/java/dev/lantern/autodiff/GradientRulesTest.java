package dev.lantern.autodiff;

import dev.lantern.cpu.EagerExecutor;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledCpuExecutor;
import dev.lantern.engine.Compiler;
import dev.lantern.frontend.GraphBuilder;
import dev.lantern.frontend.Value;
import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.TensorType;
import dev.lantern.reference.RefTensor;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The transform's contract apart from the numbers: typed errors, dtypes, accumulation, unreached values. */
class GradientRulesTest {
    @Test
    void everyComputeOpHasARuleOrATypedErrorNamingIt() {
        for (Op op : Op.values()) {
            if (op.isSource() || Gradients.hasRule(op)) {
                continue;
            }
            Node n = new Node("7", op, List.of("0", "1"), Attrs.EMPTY, TensorType.of(DType.F32, 2));
            GradientException e = assertThrows(GradientException.class, () -> VjpRules.rule(n));
            assertEquals(op, e.op());
            assertTrue(e.getMessage().contains("%7 = " + op.text() + "("), e.getMessage());
        }
        for (Op op : List.of(Op.ADD, Op.MATMUL, Op.SOFTMAX, Op.RMS_NORM, Op.LAYER_NORM, Op.ROPE, Op.GATHER, Op.CROSS_ENTROPY, Op.ATTENTION)) {
            assertTrue(Gradients.hasRule(op), op.text());
        }
    }

    @Test
    void aFusedGemmOnThePathIsATypedErrorThatSaysToDifferentiateBeforeFusion() {
        Graph g = IrParser.parse("""
                graph @fused {
                  %x = input {name="x"} : f32[3,5]
                  %w = param {name="w"} : f32[5,4]
                  %b = param {name="b"} : f32[4]
                  %y = gemm(%x, %w, %b) {act="gelu_tanh", bias=true} : f32[3,4]
                  %l = reduce_sum(%y) {axes=[0,1]} : f32[]
                  return %l
                }
                """);
        GradientException e = assertThrows(GradientException.class, () -> Gradients.ofParams(g, "l"));
        assertEquals(Op.GEMM, e.op());
        assertTrue(e.getMessage().contains("differentiate the graph before fusion"), e.getMessage());
        // off the path it is no error: nothing asks for its gradient
        Gradients.of(g, "l", List.of("l"));
    }

    @Test
    void theLossMustBeOneFloatingElement() {
        GraphBuilder g = new GraphBuilder("t");
        Value x = g.input("x", TensorType.of(DType.F32, 3));
        Value y = g.op(Op.EXP, Attrs.EMPTY, x);
        Graph graph = g.build(y);
        assertThrows(GradientException.class, () -> Gradients.of(graph, y.name(), List.of(x.name())));
        assertThrows(GradientException.class, () -> Gradients.of(graph, "nope", List.of(x.name())));
    }

    @Test
    void castSendsTheGradientBackInTheOperandsDtype() {
        GraphBuilder g = new GraphBuilder("t");
        Value x = g.input("x", TensorType.of(DType.F32, 2, 3));
        Value r = g.input("r", TensorType.of(DType.BF16, 2, 3));
        Value y = g.mul(g.cast(x, DType.BF16), r);
        Value loss = g.op(Op.REDUCE_SUM, Attrs.of("axes", new int[] {0, 1}), y);
        BackwardGraph bg = Gradients.of(g.build(loss), loss.name(), List.of(x.name()));
        Node dx = bg.graph().node(bg.gradientOf(x.name()));
        assertEquals(Op.CAST, dx.op());
        assertEquals(TensorType.of(DType.F32, 2, 3), dx.type());
        // straight through: dx = r (bf16 values are exact in f32)
        double[] rv = {0.5, -1.25, 2, 3.5, -0.75, 1};
        Map<String, RefTensor> src = Map.of("x", new RefTensor(x.shape(), new double[] {1, 2, 3, 4, 5, 6}), "r", new RefTensor(r.shape(), rv));
        assertArrayEquals(rv, ReferenceInterpreter.runExact(bg.graph(), src).get(dx.name()).data(), 0);
    }

    @Test
    void aValueReadTwiceSumsItsGradientsAndAnUnreachedOneGetsZeros() {
        GraphBuilder g = new GraphBuilder("t");
        Value x = g.input("x", TensorType.of(DType.F32, 4));
        Value unused = g.input("u", TensorType.of(DType.F32, 2));
        Value y = g.add(g.mul(x, x), x); // dy/dx = 2x + 1
        Value loss = g.op(Op.REDUCE_SUM, Attrs.of("axes", new int[] {0}), y);
        BackwardGraph bg = Gradients.of(g.build(loss), loss.name(), List.of(x.name(), unused.name()));
        double[] xv = {0.5, -2, 3, 0};
        Map<String, RefTensor> out = ReferenceInterpreter.runExact(bg.graph(), Map.of("x", new RefTensor(x.shape(), xv),
                "u", new RefTensor(unused.shape(), new double[] {1, 1})));
        assertArrayEquals(new double[] {2, -3, 7, 1}, out.get(bg.gradientOf(x.name())).data(), 1e-15);
        assertArrayEquals(new double[] {0, 0}, out.get(bg.gradientOf(unused.name())).data(), 0);
        assertEquals(List.of(loss.name(), bg.gradientOf(x.name()), bg.gradientOf(unused.name())), bg.graph().outputs());
        assertThrows(GradientException.class, () -> bg.gradientOf("nothing"));
    }

    /**
     * Two values whose gradient is the same value (add's operands), and one the loss does not reach
     * (a constant zero gradient): the outputs repeat a value and hold a constant, and both executors
     * return every gradient under its name.
     */
    @Test
    void sharedAndConstantGradientsRunOnBothExecutors() {
        GraphBuilder g = new GraphBuilder("t");
        Value a = g.input("a", TensorType.of(DType.F32, 3, 4));
        Value b = g.input("b", TensorType.of(DType.F32, 3, 4));
        Value u = g.input("u", TensorType.of(DType.F32, 5));
        Value loss = g.reduceSum(g.add(a, b), 0, 1);
        BackwardGraph bg = Gradients.of(g.build(loss), loss.name(), List.of(a.name(), b.name(), u.name()));
        assertEquals(bg.gradientOf(a.name()), bg.gradientOf(b.name()), "add sends dy itself to both operands");
        Map<String, Tensor> in = Map.of("a", Philox.normal(Tensor.allocate(a.type()), 1, 1f),
                "b", Philox.normal(Tensor.allocate(b.type()), 2, 1f), "u", Philox.normal(Tensor.allocate(u.type()), 3, 1f));
        Map<String, Tensor> eager = new EagerExecutor(true).run(bg.graph(), in);
        Map<String, Tensor> compiled;
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(Compiler.compile(bg.graph(), CompileOptions.defaults())).bind(Map.of())) {
            exec.poisonArena();
            compiled = exec.run(in);
        }
        for (Map<String, Tensor> out : List.of(eager, compiled)) {
            assertArrayEquals(new double[12], minusOnes(out.get(bg.gradientOf(a.name())).toDoubles()), 0);
            assertArrayEquals(new double[5], out.get(bg.gradientOf(u.name())).toDoubles(), 0);
        }
    }

    private static double[] minusOnes(double[] d) {
        double[] r = d.clone();
        for (int i = 0; i < r.length; i++) {
            r[i] -= 1;
        }
        return r;
    }

    @Test
    void integerIdsGetNoGradientAndTheTableGetsScatterAdd() {
        GraphBuilder g = new GraphBuilder("t");
        Value table = g.input("table", TensorType.of(DType.F32, 6, 3));
        Value ids = g.input("ids", TensorType.of(DType.I32, 4));
        Value loss = g.op(Op.REDUCE_SUM, Attrs.of("axes", new int[] {0, 1}), g.op(Op.GATHER, Attrs.EMPTY, table, ids));
        Graph graph = g.build(loss);
        assertThrows(GradientException.class, () -> Gradients.of(graph, loss.name(), List.of(ids.name())));
        BackwardGraph bg = Gradients.of(graph, loss.name(), List.of(table.name()));
        assertNotNull(bg.graph().nodes().stream().filter(n -> n.op() == Op.SCATTER_ADD).findFirst().orElse(null));
    }
}
