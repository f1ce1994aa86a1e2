package dev.lantern.engine;

import dev.lantern.cpu.EagerExecutor;
import dev.lantern.frontend.Model;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.reference.Accuracy;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** The compiled executor against the float64 reference, on fresh seeded inputs, with the arena poisoned before each run. */
class CompiledExecutorTest {
    @ParameterizedTest
    @ValueSource(strings = {"cpu-small", "encoder-small"})
    void blockMatchesReference(String config) {
        Model m = TransformerBlock.build(BlockConfig.named(config), DType.F32);
        long seed = 20261130L + config.hashCode();
        CompiledModel c = Compiler.compile(m.graph(), CompileOptions.defaults());
        Map<String, Tensor> params = m.parameters(seed);
        Map<String, Tensor> inputs = Feeds.inputs(m.graph(), seed);
        Map<String, Tensor> all = new HashMap<>(params);
        all.putAll(inputs);
        double[] ref = ReferenceInterpreter.run(m.graph(), all).get(m.graph().outputs().getFirst()).data();
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(c).bind(params)) {
            exec.poisonArena();
            double[] got = exec.run(inputs).get(m.graph().outputs().getFirst()).toDoubles();
            double rel = Accuracy.relErr(got, ref);
            assertTrue(rel <= 1e-5, config + ": compiled vs float64 reference " + rel);
            exec.poisonArena();
            double[] again = exec.run(inputs).get(m.graph().outputs().getFirst()).toDoubles();
            // a reused arena leaves nothing behind. Not bit for bit: Math.exp in the attention kernel may
            // round differently before and after the JIT compiles it (reported to the CPU backend's owner)
            assertTrue(Accuracy.relErr(again, got) <= 1e-6, "a second run on the same arena matches the first");
        }
    }

    @Test
    void bf16WithinOnePercentOfF32() {
        Model m = TransformerBlock.build(BlockConfig.named("cpu-small"), DType.F32);
        long seed = 99;
        CompiledModel c = Compiler.compile(m.graph(), CompileOptions.defaults().withAmp(CompileOptions.Amp.BF16));
        Map<String, Tensor> params = m.parameters(seed);
        Map<String, Tensor> inputs = Feeds.inputs(m.graph(), seed);
        Map<String, Tensor> all = new HashMap<>(params);
        all.putAll(inputs);
        String out = m.graph().outputs().getFirst();
        double[] f32 = new EagerExecutor().run(m.graph(), all).get(out).toDoubles();
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(c).bind(params)) {
            exec.poisonArena();
            double rel = Accuracy.relErr(exec.run(inputs).get(out).toDoubles(), f32);
            assertTrue(rel <= 1e-2, "bf16 vs f32 " + rel);
            assertTrue(rel > 1e-6, "bf16 must actually round something: " + rel);
        }
    }

    /** Ops that fusion leaves alone run through the backend's primitive kernels, out of the arena. */
    @Test
    void unfusedOpsMatchReference() {
        Graph g = IrParser.parse("""
                graph @misc {
                  %x = input {name="x"} : f32[2,8,16]
                  %y = input {name="y"} : f32[2,8,16]
                  %w = param {name="w"} : f32[16]
                  %0 = exp(%x) : f32[2,8,16]
                  %1 = mul(%0, %y) : f32[2,8,16]
                  %2 = softmax(%1) {causal=true, scale=0.5} : f32[2,8,16]
                  %3 = permute(%2) {perm=[0,2,1]} : f32[2,16,8]
                  %4 = reshape(%3) {shape=[32,8]} : f32[32,8]
                  %5 = slice(%4) {axis=0, end=24, start=4} : f32[20,8]
                  %6 = concat(%5, %5) {axis=1} : f32[20,16]
                  %7 = layer_norm(%6, %w, %w) {eps=1.0E-5} : f32[20,16]
                  %8 = tanh(%7) : f32[20,16]
                  %9 = add(%8, %w) : f32[20,16]
                  return %9, %2
                }
                """);
        CompiledModel c = Compiler.compile(g, CompileOptions.defaults());
        Map<String, Tensor> src = new HashMap<>();
        for (Node n : g.nodes()) {
            if (n.op() == Op.INPUT || n.op() == Op.PARAM) {
                Tensor t = Tensor.allocate(n.type());
                long key = Philox.key(5, n.name());
                for (long i = 0; i < t.numel(); i++) {
                    t.set(i, Philox.normal(key, i));
                }
                src.put(n.attrs().getString("name", n.name()), t);
            }
        }
        Map<String, Tensor> inputs = new HashMap<>(src);
        inputs.remove("w");
        var ref = ReferenceInterpreter.run(g, src);
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(c).bind(Map.of("w", src.get("w")))) {
            exec.poisonArena();
            var got = exec.run(inputs);
            for (String o : g.outputs()) {
                double rel = Accuracy.relErr(got.get(o).toDoubles(), ref.get(o).data());
                assertTrue(rel <= 1e-5, "%" + o + ": " + rel + "\n" + c.dump());
            }
        }
    }

    /**
     * A cast to bf16/f16 inside a fused expression rounds there, as the reference does: the CPU
     * expression compiler once took it for the identity, off by ~1e-3 relative. Inputs are scaled so
     * that nearly every value needs rounding.
     */
    @ParameterizedTest
    @ValueSource(strings = {"bf16", "f16"})
    void castInsideFusedExpressionRounds(String to) {
        Graph g = IrParser.parse("""
                graph @cast_mid {
                  %x = input {name="x"} : f32[3,7,33]
                  %y = input {name="y"} : f32[3,7,33]
                  %0 = elementwise(%x, %y) {expr="add(mul(cast_f32(cast_TO(add($0, $1))), $1), 0.25)"} : f32[3,7,33]
                  return %0
                }
                """.replace("TO", to));
        CompiledModel c = Compiler.compile(g, CompileOptions.defaults());
        Map<String, Tensor> in = new HashMap<>();
        for (String name : new String[] {"x", "y"}) {
            Tensor t = Tensor.allocate(DType.F32, dev.lantern.ir.Shape.of(3, 7, 33));
            long key = Philox.key(20261130L + to.hashCode(), name);
            for (long i = 0; i < t.numel(); i++) {
                t.set(i, 3.7f * Philox.normal(key, i));
            }
            in.put(name, t);
        }
        double[] ref = ReferenceInterpreter.run(g, in).get(g.outputs().getFirst()).data();
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(c).bind(Map.of())) {
            exec.poisonArena();
            double[] got = exec.run(in).get(g.outputs().getFirst()).toDoubles();
            double rel = Accuracy.relErr(got, ref);
            assertTrue(rel <= 1e-6, to + " cast inside the expression: compiled vs reference " + rel + "\n" + c.dump());
        }
    }
}
