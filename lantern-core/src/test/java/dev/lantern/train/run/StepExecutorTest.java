package dev.lantern.train.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.Device;
import dev.lantern.autodiff.BackwardGraph;
import dev.lantern.autodiff.Gradients;
import dev.lantern.engine.CompileOptions;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.ir.DType;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.reference.Accuracy;
import dev.lantern.tensor.Tensor;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The two ways a training step runs: the session route (parameters turned into inputs, compiled
 * for the device, weights uploaded per run: how the GPU runs it), here through the CPU backend's
 * session, gives the compiled CPU executor's loss and gradients, in f32 and under autocast.
 * The GPU's own check is {@code TrainerGpuTest} in lantern-cuda.
 */
class StepExecutorTest {
    @ParameterizedTest
    @EnumSource(CompileOptions.Amp.class)
    void theSessionRouteComputesTheCpuExecutorsStep(CompileOptions.Amp amp) {
        LanguageModel lm = LanguageModel.of(new BlockConfig("odd-train", 2, 11, 24, 3, 40, true), 29, 3);
        BackwardGraph bg = Gradients.ofParams(lm.graph(), lm.scaledLoss());
        CompileOptions co = CompileOptions.defaults().withAmp(amp);
        SplittableRandom r = new SplittableRandom(11);
        Tensor ids = Tensor.allocate(DType.I64, Shape.of(2, 11));
        Tensor targets = Tensor.allocate(DType.I64, Shape.of(2, 11));
        for (long i = 0; i < ids.numel(); i++) {
            ids.set(i, r.nextInt(29));
            targets.set(i, r.nextInt(29));
        }
        Tensor scale = Tensor.allocate(DType.F32, Shape.of());
        scale.set(0, 4f);
        Map<String, Tensor> in = Map.of(lm.ids(), ids, lm.targets(), targets, lm.scale(), scale);
        try (StepExecutor cpu = StepExecutor.open(bg.graph(), co, Device.cpu());
             StepExecutor session = new SessionStepExecutor(bg.graph(), co, Device.cpu())) {
            assertTrue(cpu instanceof CpuStepExecutor);
            Map<String, Tensor> w = new HashMap<>();
            lm.initial().forEach((name, t) -> w.put(name, cpu.boundType(name) == DType.F32 ? t : t.cast(cpu.boundType(name))));
            Map<String, Tensor> a = cpu.run(w, in);
            Map<String, Tensor> b = session.run(lm.initial(), in);
            assertEquals(a.keySet(), b.keySet());
            assertEquals(DType.F32, session.boundType("embed.weight"));
            assertTrue(session.compiled().graph().nodes().stream().noneMatch(n -> n.op() == Op.PARAM), "weights are inputs");
            double tol = amp == CompileOptions.Amp.NONE ? 1e-6 : 1e-3;
            for (String k : a.keySet()) {
                double e = Accuracy.relErr(b.get(k).toDoubles(), a.get(k).toDoubles());
                assertTrue(e <= tol, amp + " " + k + ": " + e);
            }
        }
    }

    @Test
    void paramsBecomeInputsOfTheSameNameAndType() {
        LanguageModel lm = LanguageModel.of(new BlockConfig("odd-train", 1, 5, 8, 2, 16, true), 7, 1);
        var g = SessionStepExecutor.paramsAsInputs(lm.graph());
        assertEquals(lm.graph().nodes().size(), g.nodes().size());
        for (int i = 0; i < g.nodes().size(); i++) {
            var before = lm.graph().nodes().get(i);
            var after = g.nodes().get(i);
            assertEquals(before.type(), after.type());
            assertEquals(before.op() == Op.PARAM ? Op.INPUT : before.op(), after.op());
            assertEquals(before.attrs().getString("name", before.name()), after.attrs().getString("name", after.name()));
        }
    }
}
