package dev.lantern.train.run;

import dev.lantern.RunMode;
import dev.lantern.autodiff.BackwardGraph;
import dev.lantern.autodiff.Gradients;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledCpuExecutor;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.reference.Accuracy;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The training step's graph fuses attention before differentiating: the forward is one attention
 * op and the backward the flash ops (no softmax_grad over (s, t) scores), with the same gradients
 * as the primitive form's on the compiled CPU executor; the eager baseline keeps the primitive form.
 */
class StepGradientsTest {
    static final BlockConfig CFG = BlockConfig.parse("2,37,32,4,64");

    @Test
    void theStepDifferentiatesTheFusedAttention() {
        LanguageModel m = LanguageModel.of(CFG, 13, 3);
        BackwardGraph flash = StepGradients.of(m, RunMode.GRAPH);
        assertTrue(count(flash.graph(), Op.ATTENTION) == 1 && count(flash.graph(), Op.ATTENTION_GRAD_KV) == 1
                && count(flash.graph(), Op.SOFTMAX_GRAD) == 0, "fused forward, flash backward");
        BackwardGraph eager = StepGradients.of(m, RunMode.EAGER);
        assertTrue(count(eager.graph(), Op.ATTENTION) == 0 && count(eager.graph(), Op.SOFTMAX_GRAD) == 1, "the primitive form");

        Graph f = m.graph();
        List<String> trained = f.params().stream().map(Node::name).toList();
        BackwardGraph prim = Gradients.of(f, m.scaledLoss(), trained, Gradients.Options.PRIMITIVE_ATTENTION);
        Map<String, Tensor> in = StepBatches.of(m, CFG, 13);
        Map<String, Tensor> a = run(flash, m, in);
        Map<String, Tensor> b = run(prim, m, in);
        for (Map.Entry<String, String> e : m.paramNames().entrySet()) {
            double err = Accuracy.relErr(a.get(flash.gradientOf(e.getKey())).toDoubles(), b.get(prim.gradientOf(e.getKey())).toDoubles());
            assertTrue(err < 1e-4, e.getValue() + ": rel err " + err);
        }
    }

    /**
     * Fused compilation sums the residual stream's gradient in each norm's dx kernel
     * (rms_norm_grad {residual=true}, no add reading a dx); the eager baseline keeps the adds. In
     * f32 the sum is the add's, so the gradients agree with the unfused step's.
     */
    @Test
    void fusedStepSumsTheResidualGradientInTheNormsDx() {
        LanguageModel m = LanguageModel.of(CFG, 13, 3);
        BackwardGraph bg = StepGradients.of(m, RunMode.GRAPH);
        CompiledModel fused = Compiler.compile(bg.graph(), CompileOptions.defaults().withFuse(true));
        CompiledModel unfused = Compiler.compile(bg.graph(), CompileOptions.defaults().withFuse(false));
        assertTrue(residualNormGrads(fused.graph()) == 2, "one per norm of the block: " + residualNormGrads(fused.graph()));
        assertTrue(addsOfNormGrads(fused.graph()) == 0, "no add reads a norm's dx in the fused step");
        assertTrue(residualNormGrads(unfused.graph()) == 0 && addsOfNormGrads(unfused.graph()) == 2, "eager keeps the adds");
        Map<String, Tensor> in = StepBatches.of(m, CFG, 13);
        Map<String, Tensor> a = run(fused, m, in);
        Map<String, Tensor> b = run(unfused, m, in);
        for (Map.Entry<String, String> e : m.paramNames().entrySet()) {
            String grad = bg.gradientOf(e.getKey());
            double err = Accuracy.relErr(a.get(grad).toDoubles(), b.get(grad).toDoubles());
            assertTrue(err < 1e-5, e.getValue() + ": rel err " + err);
        }
    }

    private static long residualNormGrads(Graph g) {
        return g.nodes().stream().filter(n -> (n.op() == Op.RMS_NORM_GRAD || n.op() == Op.LAYER_NORM_GRAD)
                && n.attrs().getBool("residual", false)).count();
    }

    private static long addsOfNormGrads(Graph g) {
        return g.nodes().stream().filter(n -> n.op() == Op.ADD && n.inputs().stream().map(g::node)
                .anyMatch(p -> p != null && (p.op() == Op.RMS_NORM_GRAD || p.op() == Op.LAYER_NORM_GRAD))).count();
    }

    private static Map<String, Tensor> run(CompiledModel cm, LanguageModel m, Map<String, Tensor> in) {
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(cm).bind(m.initial())) {
            return exec.run(in);
        }
    }

    private static Map<String, Tensor> run(BackwardGraph bg, LanguageModel m, Map<String, Tensor> in) {
        return run(Compiler.compile(bg.graph(), CompileOptions.defaults()), m, in);
    }

    private static long count(Graph g, Op op) {
        return g.nodes().stream().filter(n -> n.op() == op).count();
    }
}
