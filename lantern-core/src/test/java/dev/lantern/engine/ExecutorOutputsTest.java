package dev.lantern.engine;

import dev.lantern.frontend.Model;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.LanternException;
import dev.lantern.ir.Shape;
import dev.lantern.reference.Accuracy;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The compiled executor's outputs given by the caller ({@code run(inputs, outputs)}) and its weights
 * packed at bind: results match the float64 reference, a reused output set holds each forward's
 * result, an earlier result the caller kept is never overwritten, and bind packs again what it is given.
 */
class ExecutorOutputsTest {
    private static final String GRAPH = """
            graph @head {
              %x = input {name="x"} : f32[3,7,37]
              %w = param {name="w"} : f32[41,37]
              %v = param {name="v"} : f32[41,13]
              %0 = matmul(%x, %w) {transpose_b=true} : f32[3,7,41]
              %1 = gelu(%0) : f32[3,7,41]
              %2 = matmul(%1, %v) : f32[3,7,13]
              return %2, %0
            }
            """;

    private static Map<String, Tensor> params(long seed) {
        return Map.of("w", Philox.normal(Tensor.allocate(DType.F32, Shape.of(41, 37)), seed, 1f),
                "v", Philox.normal(Tensor.allocate(DType.F32, Shape.of(41, 13)), seed + 1, 1f));
    }

    private static double[] reference(Graph g, Map<String, Tensor> params, Tensor x, String out) {
        Map<String, Tensor> all = new HashMap<>(params);
        all.put("x", x);
        return ReferenceInterpreter.run(g, all).get(out).data();
    }

    @Test
    void reusedOutputsHoldEachForwardAndKeptResultsStay() {
        Graph g = IrParser.parse(GRAPH);
        CompiledModel c = Compiler.compile(g, CompileOptions.defaults());
        Map<String, Tensor> p = params(5);
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(c).bind(p)) {
            Map<String, Tensor> outs = exec.newOutputs();
            Tensor kept = null;
            for (long seed = 31; seed < 34; seed++) {
                Tensor x = Philox.normal(Tensor.allocate(DType.F32, Shape.of(3, 7, 37)), seed, 1f);
                Map<String, Tensor> fresh = exec.run(Map.of("x", x));
                exec.poisonArena();
                assertSame(outs, exec.run(Map.of("x", x), outs));
                for (String o : g.outputs()) {
                    double rel = Accuracy.relErr(outs.get(o).toDoubles(), reference(g, p, x, o));
                    assertTrue(rel <= 1e-5, "reused output %" + o + " seed=" + seed + ": " + rel);
                    assertArrayEquals(fresh.get(o).toFloats(), outs.get(o).toFloats(), "fresh and reused outputs agree, seed=" + seed);
                }
                if (kept == null) {
                    kept = fresh.get(g.outputs().getFirst());
                }
            }
            Tensor x31 = Philox.normal(Tensor.allocate(DType.F32, Shape.of(3, 7, 37)), 31, 1f);
            double rel = Accuracy.relErr(kept.toDoubles(), reference(g, p, x31, g.outputs().getFirst()));
            assertTrue(rel <= 1e-5, "the first forward's own result, kept by the caller, is untouched by later forwards: " + rel);
        }
    }

    /**
     * Outputs a kernel writes straight into the caller's tensor, beside ones copied out: a value later kernels
     * read, a free view of it (transposed), a value returned twice, and an output tensor that is also the input.
     */
    @Test
    void outputsWrittenInPlaceOrCopiedOutAreRight() {
        Graph g = IrParser.parse("""
                graph @outs {
                  %x = input {name="x"} : f32[6,5]
                  %0 = exp(%x) : f32[6,5]
                  %1 = transpose(%0) {dim0=0, dim1=1} : f32[5,6]
                  %2 = mul(%0, %x) : f32[6,5]
                  %3 = neg(%2) : f32[6,5]
                  return %0, %1, %3, %3
                }
                """);
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(Compiler.compile(g, CompileOptions.defaults())).bind(Map.of())) {
            for (long seed = 3; seed < 5; seed++) {
                Tensor x = Philox.normal(Tensor.allocate(DType.F32, Shape.of(6, 5)), seed, 1f);
                Map<String, double[]> want = new HashMap<>();
                Map<String, dev.lantern.reference.RefTensor> ref = ReferenceInterpreter.run(g, Map.of("x", x));
                for (String o : g.outputs()) {
                    want.put(o, ref.get(o).data());
                }
                exec.poisonArena();
                Map<String, Tensor> outs = exec.run(Map.of("x", x));
                for (String o : g.outputs()) {
                    assertTrue(Accuracy.relErr(outs.get(o).toDoubles(), want.get(o)) <= 1e-6, "%" + o + " seed " + seed);
                }
                // the caller's tensor for %0 is x itself: the forward reads x, so %0 is copied out at the end
                Map<String, Tensor> shared = new HashMap<>(exec.newOutputs());
                Tensor xs = Philox.normal(Tensor.allocate(DType.F32, Shape.of(6, 5)), seed, 1f); // x's values, its own memory
                shared.put(g.outputs().getFirst(), xs);
                exec.poisonArena();
                exec.run(Map.of("x", xs), shared);
                for (String o : g.outputs()) {
                    assertTrue(Accuracy.relErr(shared.get(o).toDoubles(), want.get(o)) <= 1e-6, "sharing x: %" + o + " seed " + seed);
                }
            }
        }
    }

    @Test
    void wrongOutputsAreATypedError() {
        Graph g = IrParser.parse(GRAPH);
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(Compiler.compile(g, CompileOptions.defaults())).bind(params(5))) {
            Tensor x = Philox.normal(Tensor.allocate(DType.F32, Shape.of(3, 7, 37)), 1, 1f);
            Map<String, Tensor> outs = new HashMap<>(exec.newOutputs());
            outs.put(g.outputs().getFirst(), Tensor.allocate(DType.F32, Shape.of(3, 7, 12)));
            assertThrows(LanternException.class, () -> exec.run(Map.of("x", x), outs));
            outs.remove(g.outputs().getFirst());
            assertThrows(LanternException.class, () -> exec.run(Map.of("x", x), outs));
        }
    }

    @Test
    void bindAgainPacksTheNewWeights() {
        Graph g = IrParser.parse(GRAPH);
        Tensor x = Philox.normal(Tensor.allocate(DType.F32, Shape.of(3, 7, 37)), 8, 1f);
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(Compiler.compile(g, CompileOptions.defaults())).bind(params(5))) {
            exec.run(Map.of("x", x));
            Map<String, Tensor> p2 = params(6);
            exec.bind(p2);
            String out = g.outputs().getFirst();
            double rel = Accuracy.relErr(exec.run(Map.of("x", x)).get(out).toDoubles(), reference(g, p2, x, out));
            assertTrue(rel <= 1e-5, "after a second bind the forward uses the second weights: " + rel);
        }
    }

    @Test
    void blockWithPackedWeightsMatchesReferenceOverManyForwards() {
        Model m = TransformerBlock.build(BlockConfig.named("cpu-small"), DType.F32);
        long seed = 404;
        Map<String, Tensor> params = m.parameters(seed);
        Map<String, Tensor> inputs = Feeds.inputs(m.graph(), seed);
        Map<String, Tensor> all = new HashMap<>(params);
        all.putAll(inputs);
        String out = m.graph().outputs().getFirst();
        double[] ref = ReferenceInterpreter.run(m.graph(), all).get(out).data();
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(Compiler.compile(m.graph(), CompileOptions.defaults())).bind(params)) {
            Map<String, Tensor> outs = exec.newOutputs();
            for (int i = 0; i < 3; i++) {
                exec.poisonArena();
                exec.run(inputs, outs);
                double rel = Accuracy.relErr(outs.get(out).toDoubles(), ref);
                assertTrue(rel <= 1e-5, "forward " + i + ": " + rel);
            }
        }
    }
}
