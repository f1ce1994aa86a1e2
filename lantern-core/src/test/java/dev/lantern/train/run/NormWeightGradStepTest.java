package dev.lantern.train.run;

import dev.lantern.RunMode;
import dev.lantern.autodiff.BackwardGraph;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The norms' weight gradients of a language model's step: one norm_weight_grad per norm in the
 * fused compilation (no x̂ norm(x, ones), no product), the primitive composition in the unfused
 * one, and the same gradients from both on the compiled CPU executor (decoder: rms_norm; encoder:
 * layer_norm with a bias) on odd shapes.
 */
class NormWeightGradStepTest {
    @ParameterizedTest
    @ValueSource(strings = {"2,37,24,4,40", "3,19,20,4,36,encoder"})
    void fusedStepHasOneOpPerNormAndTheUnfusedGradients(String shape) {
        BlockConfig cfg = BlockConfig.parse(shape);
        LanguageModel m = LanguageModel.of(cfg, 13, 7);
        BackwardGraph step = StepGradients.of(m, RunMode.GRAPH);
        CompiledModel fused = Compiler.compile(step.graph(), CompileOptions.defaults().withFuse(true));
        CompiledModel unfused = Compiler.compile(step.graph(), CompileOptions.defaults().withFuse(false));
        assertEquals(3, count(fused.graph(), Op.NORM_WEIGHT_GRAD), "attention, MLP and final norms");
        assertEquals(0, count(unfused.graph(), Op.NORM_WEIGHT_GRAD), "the unfused step keeps the composition");
        assertEquals(0, xhats(fused.graph()), "no norm(x, ones) left in the fused step");
        assertEquals(3, xhats(unfused.graph()));

        Map<String, Tensor> in = StepBatches.of(m, cfg, 13);
        Map<String, Tensor> a = run(fused, m, in);
        Map<String, Tensor> b = run(unfused, m, in);
        for (Map.Entry<String, String> e : m.paramNames().entrySet()) {
            String g = step.gradientOf(e.getKey());
            double err = Accuracy.relErr(a.get(g).toDoubles(), b.get(g).toDoubles());
            assertTrue(err < 1e-5, e.getValue() + ": rel err " + err);
        }
    }

    private static Map<String, Tensor> run(CompiledModel cm, LanguageModel m, Map<String, Tensor> in) {
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(cm).bind(m.initial())) {
            return exec.run(in);
        }
    }

    private static long count(Graph g, Op op) {
        return g.nodes().stream().filter(n -> n.op() == op).count();
    }

    /** Norms whose weight is a constant: x̂ of a weight gradient. */
    private static long xhats(Graph g) {
        return g.nodes().stream().filter(n -> n.op() == Op.RMS_NORM || n.op() == Op.LAYER_NORM || n.op() == Op.FUSED_NORM)
                .filter(n -> {
                    Node w = g.node(n.input(n.op() == Op.FUSED_NORM && n.attrs().getBool("residual", false) ? 2 : 1));
                    return w != null && w.op() == Op.CONSTANT;
                }).count();
    }
}
