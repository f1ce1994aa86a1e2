package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.Device;
import dev.lantern.RunMode;
import dev.lantern.checkpoint.Checkpoint;
import dev.lantern.engine.CompileOptions;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.train.Parameter;
import dev.lantern.train.run.LanguageModel;
import dev.lantern.train.run.StepResult;
import dev.lantern.train.run.TrainOptions;
import dev.lantern.train.run.Trainer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The training step kept on the GPU (dev.lantern.cuda.train.CudaTrainStep): weights, gradients
 * and AdamW's moments on the device, the multi-tensor sum of squares and AdamW kernels. Checked
 * against the same step with the optimizer on the host (the system property
 * {@link Trainer#HOST_OPTIMIZER}: the same forward and backward on the GPU, the CPU's AdamW, scaler
 * and clipping): step by step, the losses and the final weights agree; a checkpoint read from the
 * device and written back continues bit-exactly; the eager (one kernel per op) step trains too.
 */
@Tag("gpu")
class DeviceStepGpuTest {
    static final int STEPS = 10;

    @Test
    void residentStepMatchesTheHostOptimizer() {
        Gpu.device();
        for (CompileOptions.Amp amp : new CompileOptions.Amp[] {CompileOptions.Amp.NONE, CompileOptions.Amp.F16}) {
            TrainOptions o = TrainOptions.defaults().withAmp(amp).withDeterministic(true);
            LanguageModel lm = LanguageModel.of(BlockConfig.named("cpu-small"), o.vocab(), o.seed());
            List<StepResult> host;
            List<Parameter> hostParams;
            System.setProperty(Trainer.HOST_OPTIMIZER, "true");
            try (Trainer t = new Trainer(lm, o, Device.cuda(0))) {
                assertFalse(t.resident());
                host = run(t, STEPS);
                hostParams = t.parameters();
            } finally {
                System.clearProperty(Trainer.HOST_OPTIMIZER);
            }
            try (Trainer t = new Trainer(lm, o, Device.cuda(0))) {
                assertTrue(t.resident(), "the cuda module provides a device step");
                List<StepResult> dev = run(t, STEPS);
                for (int i = 0; i < STEPS; i++) {
                    assertEquals(host.get(i).loss(), dev.get(i).loss(), 1e-5 * Math.abs(host.get(i).loss()), amp + " step " + i + " loss");
                    assertEquals(host.get(i).applied(), dev.get(i).applied(), amp + " step " + i + " applied");
                    assertEquals(host.get(i).gradNorm(), dev.get(i).gradNorm(), 1e-5 * Math.abs(host.get(i).gradNorm()),
                            amp + " step " + i + " norm");
                }
                List<Parameter> devParams = t.parameters();
                double worst = 0;
                for (int p = 0; p < hostParams.size(); p++) {
                    for (long e = 0; e < hostParams.get(p).numel(); e++) {
                        worst = Math.max(worst, Math.abs(hostParams.get(p).value().get(e) - devParams.get(p).value().get(e)));
                    }
                }
                assertTrue(worst <= 1e-5, amp + ": weights after " + STEPS + " steps differ by " + worst);
                if (amp == CompileOptions.Amp.F16) {
                    assertEquals(t.scaler().overflows(), t.scaler().skippedSteps());
                }
            }
        }
    }

    @Test
    void checkpointFromTheDeviceContinuesBitExactly() {
        Gpu.device();
        TrainOptions o = TrainOptions.defaults().withAmp(CompileOptions.Amp.BF16).withDeterministic(true);
        LanguageModel lm = LanguageModel.of(BlockConfig.named("cpu-small"), o.vocab(), o.seed());
        Checkpoint mid;
        String straight;
        try (Trainer t = new Trainer(lm, o, Device.cuda(0))) {
            run(t, 5);
            mid = t.checkpoint();
            run(t, 5);
            straight = t.weightsHash();
        }
        try (Trainer t = new Trainer(lm, o, Device.cuda(0))) {
            t.restore(mid);
            assertEquals(5, t.steps());
            run(t, 5);
            assertEquals(straight, t.weightsHash(), "restored from step 5 and trained 5 more");
        }
    }

    @Test
    void eagerStepTrainsAndStartsWhereTheCompiledOneDoes() {
        Gpu.device();
        TrainOptions o = TrainOptions.defaults();
        LanguageModel lm = LanguageModel.of(BlockConfig.named("cpu-small"), o.vocab(), o.seed());
        double compiledFirst;
        try (Trainer t = new Trainer(lm, o, Device.cuda(0), RunMode.GRAPH)) {
            compiledFirst = t.step().loss();
        }
        try (Trainer t = new Trainer(lm, o, Device.cuda(0), RunMode.EAGER)) {
            assertTrue(t.resident());
            List<StepResult> r = run(t, 20);
            assertEquals(compiledFirst, r.getFirst().loss(), 1e-4 * compiledFirst, "eager vs compiled first loss");
            double last = r.subList(10, 20).stream().mapToDouble(StepResult::loss).average().orElseThrow();
            assertTrue(last < 0.9 * r.getFirst().loss(), "eager: loss " + r.getFirst().loss() + " -> " + last);
        }
    }

    private static List<StepResult> run(Trainer t, int steps) {
        List<StepResult> r = new ArrayList<>();
        for (int i = 0; i < steps; i++) {
            r.add(t.step());
        }
        return r;
    }
}
