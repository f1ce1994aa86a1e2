package dev.lantern.train.run;

import dev.lantern.RunMode;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.plan.Buffer;
import dev.lantern.plan.MemoryPlan;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the compiled training step of a decoder language model holds at once under AMP, the two
 * choices that took 384 MiB off the 16x1024x4096 block's H200 step (arena 4 097 -> 3 713 MiB):
 * <ul>
 * <li>a linear layer's weight gradient is computed before its input gradient, so the saved
 *     activation (the MLP's GELU output, 512 MiB there) is dead before the input gradient (as
 *     large) is written;</li>
 * <li>q and k, which attention reads in low precision and RoPE's recompute reads in the backward,
 *     are stored once in low precision from the GEMM, not kept in f32 for the backward.</li>
 * </ul>
 */
class StepMemoryTest {
    @ParameterizedTest
    @ValueSource(strings = {"cuda", "cpu"})
    void activationsAndGradientsOfTheMlpAreNeverHeldTogether(String target) {
        CompiledModel m = compile(target);
        Graph g = m.graph();
        Node geluGrad = g.nodes().stream().filter(n -> n.op() == Op.GELU_GRAD).findFirst().orElseThrow();
        Node gelu = g.nodes().stream().filter(n -> n.op() == Op.GELU).findFirst().orElseThrow();
        MemoryPlan.Placement activation = m.plan().byValue().get(gelu.name());
        MemoryPlan.Placement inputGradient = m.plan().byValue().get(geluGrad.input(1));
        assertNotNull(activation, "the GELU output is planned");
        assertNotNull(inputGradient, "the gradient into GELU is planned");
        Buffer a = activation.buffer();
        Buffer d = inputGradient.buffer();
        assertFalse(a.overlaps(d), "GELU's output " + a + " must be dead before the down projection's input gradient " + d + " is written");
    }

    @ParameterizedTest
    @ValueSource(strings = {"cuda", "cpu"})
    void queriesAndKeysAreStoredInLowPrecisionOnly(String target) {
        Graph g = compile(target).graph();
        int reads = 0;
        for (Node n : g.nodes()) {
            boolean forwardRope = n.op() == Op.ROPE && !n.attrs().getBool("inverse", false);
            if (n.op() != Op.ATTENTION && !forwardRope) {
                continue;
            }
            for (int i = 0; i < (forwardRope ? 1 : 2); i++) {
                Node src = g.node(n.input(i));
                while (src != null && (src.op() == Op.PERMUTE || src.op() == Op.RESHAPE)) {
                    src = g.node(src.input(0));
                }
                assertNotNull(src, n + " reads a graph input");
                boolean roundedHere = src.op() == Op.CAST && g.type(src.input(0)).dtype() == DType.F32;
                assertTrue(src.type().dtype() == DType.BF16 && !roundedHere,
                        n.op() + " reads " + src + ": q and k must come from the GEMM in bf16, not be kept in f32 and rounded");
                reads++;
            }
        }
        assertTrue(reads >= 4, "the forward attention and the backward's RoPE recompute read q and k (" + reads + " reads)");
    }

    /**
     * The norm weight's gradient Σ dy·x̂ is one norm_weight_grad (fuse-norm): x̂ and the product,
     * each as large as the residual stream in f32, are never written. (Before it, x̂ died at the
     * product, written in place over it, and dx after both: arena 3 713 -> 3 457 MiB at 16x1024x4096.)
     */
    @ParameterizedTest
    @ValueSource(strings = {"cuda", "cpu"})
    void theNormWeightGradientIsOneOpWithoutXhat(String target) {
        Graph g = compile(target).graph();
        long ops = g.nodes().stream().filter(n -> n.op() == Op.NORM_WEIGHT_GRAD).count();
        assertTrue(ops >= 3, "the step's three norms' weight gradients (" + ops + ")");
        for (Node n : g.nodes()) {
            boolean norm = n.op() == Op.RMS_NORM || n.op() == Op.LAYER_NORM || n.op() == Op.FUSED_NORM;
            if (norm) {
                for (String in : n.inputs()) {
                    Node p = g.node(in);
                    assertFalse(p != null && p.op() == Op.CONSTANT, n + " is an x̂ (a norm with a constant weight)");
                }
            }
        }
    }

    /**
     * The flash backward writes dk;dv stacked in low precision. Each half is sliced, roped (dk) and
     * read by its GEMMs in low precision: never widened whole to f32, sliced and rounded back (three
     * kernels and 0.8 ms of the 16x1024x4096 step).
     */
    @ParameterizedTest
    @ValueSource(strings = {"cuda", "cpu"})
    void keyAndValueGradientsStayInLowPrecision(String target) {
        Graph g = compile(target).graph();
        int kv = 0;
        for (Node n : g.nodes()) {
            if (n.op() != Op.ATTENTION_GRAD_KV) {
                continue;
            }
            kv++;
            assertTrue(n.type().dtype() == DType.BF16, n.toString());
            for (Node u : g.nodes()) {
                if (u.inputs().contains(n.name())) {
                    assertTrue(u.op() == Op.SLICE && u.type().dtype() == DType.BF16, "dk;dv read by " + u);
                    for (Node r : g.nodes()) {
                        if (r.inputs().contains(u.name())) {
                            assertTrue(r.op() != Op.CAST, "a half of dk;dv is cast: " + r);
                        }
                    }
                }
            }
        }
        assertTrue(kv >= 1, "the step has a flash attention backward");
    }

    private static BlockConfig config() {
        return BlockConfig.parse("2,64,128,4,512");
    }

    private static CompiledModel compile(String target) {
        LanguageModel lm = LanguageModel.of(config(), 32, 5);
        Graph step = SessionStepExecutor.paramsAsInputs(StepGradients.of(lm, RunMode.GRAPH).graph());
        return Compiler.compile(step, CompileOptions.defaults().withAmp(CompileOptions.Amp.BF16).withTarget(target).withFuse(true));
    }
}
