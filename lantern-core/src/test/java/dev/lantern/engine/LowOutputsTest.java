package dev.lantern.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.reference.Accuracy;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code CompileOptions.lowOutputs}: under AMP a logits head keeps its bf16 result (as torch.autocast
 * returns it) instead of a cast back to f32; the numbers are the f32 ones rounded, and the option
 * is part of the compiled model's key.
 */
class LowOutputsTest {
    static final Graph HEAD = IrParser.parse("""
            graph @head {
              %x = input {name="x"} : f32[3,5,24]
              %w = param {name="w"} : f32[37,24]
              %logits = matmul(%x, %w) {transpose_b=true} : f32[3,5,37]
              return %logits
            }
            """);

    static Tensor normal(int n, long seed, dev.lantern.ir.Shape shape) {
        float[] v = new float[n];
        long key = Philox.key(seed, "w");
        for (int i = 0; i < n; i++) {
            v[i] = (float) (Philox.uniform(key, i) * 2 - 1);
        }
        return Tensor.of(DType.F32, shape, v);
    }

    @Test
    void logitsStayBf16AndMatchTheReference() {
        CompileOptions amp = CompileOptions.defaults().withAmp(CompileOptions.Amp.BF16);
        CompiledModel f32Out = Compiler.compile(HEAD, amp);
        CompiledModel lowOut = Compiler.compile(HEAD, amp.withLowOutputs(true));
        String out = HEAD.outputs().getFirst();
        assertEquals(DType.F32, f32Out.graph().type(f32Out.graph().outputs().getFirst()).dtype());
        assertEquals(DType.BF16, lowOut.graph().type(lowOut.graph().outputs().getFirst()).dtype());
        assertNotEquals(amp.hash(), amp.withLowOutputs(true).hash(), "the option changes the compiled result");
        assertEquals(CompileOptions.defaults().hash(), CompileOptions.defaults().withLowOutputs(true).hash(), "without AMP it changes nothing");

        Map<String, Tensor> params = Map.of("w", normal(37 * 24, 7, dev.lantern.ir.Shape.of(37, 24)));
        Map<String, Tensor> inputs = Feeds.inputs(HEAD, 8);
        Map<String, Tensor> all = new HashMap<>(params);
        all.putAll(inputs);
        double[] ref = ReferenceInterpreter.run(HEAD, all).get(out).data();
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(lowOut).bind(params)) {
            Tensor got = exec.run(inputs).get(lowOut.graph().outputs().getFirst());
            assertEquals(DType.BF16, got.dtype());
            double rel = Accuracy.relErr(got.toDoubles(), ref);
            assertTrue(rel <= 2e-2 && rel > 1e-6, "bf16 logits vs the float64 reference: " + rel);
        }
    }
}
