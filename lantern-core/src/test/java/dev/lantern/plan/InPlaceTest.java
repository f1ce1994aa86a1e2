package dev.lantern.plan;

import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.CompiledCpuExecutor;
import dev.lantern.engine.Compiler;
import dev.lantern.engine.Feeds;
import dev.lantern.reference.Accuracy;
import dev.lantern.ir.IrParser;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The planner's in-place rule ({@link InPlace}): an elementwise kernel takes the slot of a same-shape,
 * same-width input that dies at it, and of nothing else; the plan stays one where no two live values
 * share bytes but for those hand-overs.
 */
class InPlaceTest {
    private static MemoryPlan plan(String body) {
        CompiledModel m = Compiler.compile(IrParser.parse("graph @g {\n" + body + "}\n"),
                CompileOptions.defaults().withFuse(false));
        return m.plan();
    }

    @Test
    void anElementwiseKernelWritesOverTheInputThatDiesAtIt() {
        MemoryPlan p = plan("""
                  %x = input {name="x"} : f32[64,32]
                  %y = input {name="y"} : f32[64,32]
                  %a = exp(%x) : f32[64,32]
                  %b = tanh(%y) : f32[64,32]
                  %c = mul(%a, %b) : f32[64,32]
                  %d = neg(%c) : f32[64,32]
                  return %d
                """);
        // c over b: both its inputs die at c, and b is the output of the kernel just before c (a backend may then
        // compute c in b's kernel, CUDA's DGELU epilogue); d is a graph output: it may take c's slot, c is no output
        assertEquals(Map.of("c", "b", "d", "c"), p.inPlace());
        assertEquals(p.offset("b"), p.offset("c"));
        assertEquals(p.offset("c"), p.offset("d"));
        // a, b live together; then c replaces b: two slots of 8 KiB
        assertEquals(2 * 64 * 32 * 4, p.arenaBytes());
        // with neither input made just before, the first that dies there
        MemoryPlan first = plan("""
                  %x = input {name="x"} : f32[64,32]
                  %y = input {name="y"} : f32[64,32]
                  %a = exp(%x) : f32[64,32]
                  %b = tanh(%y) : f32[64,32]
                  %e = reduce_sum(%x) {axes=[1], keepdims=true} : f32[64,1]
                  %c = mul(%a, %b) : f32[64,32]
                  %d = add(%c, %e) : f32[64,32]
                  return %d
                """);
        assertEquals("a", first.inPlace().get("c"));
    }

    @Test
    void noHandOverWhereTheInputLivesOnIsBroadcastNarrowerOrAnOutput() {
        MemoryPlan p = plan("""
                  %x = input {name="x"} : f32[64,32]
                  %r = input {name="r"} : f32[32]
                  %a = exp(%x) : f32[64,32]
                  %s = exp(%r) : f32[32]
                  %b = add(%a, %s) : f32[64,32]
                  %c = mul(%b, %a) : f32[64,32]
                  %h = cast(%c) {to="bf16"} : bf16[64,32]
                  return %h, %b
                """);
        // b: a is read again by c, s is broadcast; c: b is a graph output, a dies at c (taken);
        // h: c's elements are 4 bytes, h's 2
        assertEquals(Map.of("c", "a"), p.inPlace());
    }

    @Test
    void theCpuBackendComputesTheSameValuesInPlace() {
        String ir = """
                graph @g {
                  %x = input {name="x"} : f32[3,37,11]
                  %y = input {name="y"} : f32[3,37,11]
                  %a = exp(%x) : f32[3,37,11]
                  %b = gelu(%y) {approximate="tanh"} : f32[3,37,11]
                  %c = mul(%a, %b) : f32[3,37,11]
                  %d = sub(%c, %y) : f32[3,37,11]
                  %e = tanh(%d) : f32[3,37,11]
                  return %e
                }
                """;
        dev.lantern.ir.Graph g = IrParser.parse(ir);
        CompiledModel m = Compiler.compile(g, CompileOptions.defaults().withFuse(false));
        assertTrue(m.plan().inPlace().size() >= 2, "hand-overs planned: " + m.plan().inPlace());
        Map<String, Tensor> in = Feeds.inputs(g, 41);
        double[] want = ReferenceInterpreter.run(g, in).get("e").data();
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(m).bind(Map.of())) {
            double[] got = exec.run(in).get(m.graph().outputs().getFirst()).toDoubles();
            assertTrue(Accuracy.relErr(got, want) <= 1e-5, "in-place plan vs the float64 reference: " + Accuracy.relErr(got, want));
        }
    }
}
