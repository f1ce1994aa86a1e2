package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.Device;
import dev.lantern.RunMode;
import dev.lantern.checkpoint.Checkpoint;
import dev.lantern.checkpoint.StoredTensor;
import dev.lantern.engine.CompileOptions;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.tensor.Tensor;
import dev.lantern.train.Parameter;
import dev.lantern.train.run.LanguageModel;
import dev.lantern.train.run.StepResult;
import dev.lantern.train.run.TrainOptions;
import dev.lantern.train.run.Trainer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The training step kept on the GPU (dev.lantern.cuda.train.CudaTrainStep): weights, gradients
 * and AdamW's moments on the device, the multi-tensor sum of squares and AdamW kernels. Checked
 * against the same step with the optimizer on the host (the system property
 * {@link Trainer#HOST_OPTIMIZER}: the same forward and backward on the GPU, the CPU's AdamW, scaler
 * and clipping): step by step, the losses and the final weights agree; a checkpoint read from the
 * device and written back continues bit-exactly; the eager (one kernel per op) step trains too.
 * The same for SGD with momentum ({@code lt_mt_sgd}, the momentum buffers on the device): against
 * the host's Sgd step by step (f32 and f16 with the scaler), its checkpoint holding the host's
 * {@code momentum_buffer.*} tensors, and a restore continuing bit-exactly.
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

    /**
     * Each step's device span: one per step, in order, each positive and no longer than the host's
     * wall time around the steps (the spans do not overlap on one stream), none twice, and only the
     * newest 4096 kept by a run that never asks.
     */
    @Test
    void eachStepHasOneDeviceSpanWithinTheWallTime() {
        Gpu.device();
        TrainOptions o = TrainOptions.defaults();
        LanguageModel lm = LanguageModel.of(BlockConfig.named("cpu-small"), o.vocab(), o.seed());
        try (Trainer t = new Trainer(lm, o, Device.cuda(0), RunMode.GRAPH)) {
            run(t, 2);
            assertEquals(2, t.stepDeviceMillis().length, "the warm-up steps' spans");
            long t0 = System.nanoTime();
            run(t, 7);
            double[] spans = t.stepDeviceMillis();
            double wallMs = (System.nanoTime() - t0) / 1e6;
            assertEquals(7, spans.length, "one span per step");
            double sum = 0;
            for (double s : spans) {
                assertTrue(s > 0, "a step's span is " + s + " ms");
                sum += s;
            }
            assertTrue(sum <= wallMs * 1.01 + 0.05, "the spans add to " + sum + " ms in " + wallMs + " ms of wall time");
            assertEquals(0, t.stepDeviceMillis().length, "spans handed over once");
            run(t, 4100); // a run that never asks keeps only the newest 4096 (StepSpans.KEPT)
            assertEquals(4096, t.stepDeviceMillis().length, "spans kept without a drain");
        }
    }

    /** SGD with momentum 0.9 (weight decay 0.01, clip 1, as the CLI's defaults) at a learning rate that moves the weights. */
    private static TrainOptions sgd(CompileOptions.Amp amp) {
        return TrainOptions.defaults().withAmp(amp).withDeterministic(true).withLr(0.05).withOptimizer(TrainOptions.Kind.SGD, 0.9);
    }

    @Test
    void residentSgdMatchesTheHostSgd() {
        Gpu.device();
        for (CompileOptions.Amp amp : new CompileOptions.Amp[] {CompileOptions.Amp.NONE, CompileOptions.Amp.F16}) {
            TrainOptions o = sgd(amp);
            LanguageModel lm = LanguageModel.of(BlockConfig.named("cpu-small"), o.vocab(), o.seed());
            List<StepResult> host;
            List<Parameter> hostParams;
            Map<String, StoredTensor> hostBuffers;
            System.setProperty(Trainer.HOST_OPTIMIZER, "true");
            try (Trainer t = new Trainer(lm, o, Device.cuda(0))) {
                assertFalse(t.resident());
                host = run(t, STEPS);
                hostParams = t.parameters();
                hostBuffers = momentumBuffers(t.checkpoint());
            } finally {
                System.clearProperty(Trainer.HOST_OPTIMIZER);
            }
            try (Trainer t = new Trainer(lm, o, Device.cuda(0))) {
                assertTrue(t.resident(), "SGD runs in the device step");
                List<StepResult> dev = run(t, STEPS);
                for (int i = 0; i < STEPS; i++) {
                    assertEquals(host.get(i).loss(), dev.get(i).loss(), 1e-5 * Math.abs(host.get(i).loss()), amp + " step " + i + " loss");
                    assertEquals(host.get(i).applied(), dev.get(i).applied(), amp + " step " + i + " applied");
                    assertEquals(host.get(i).gradNorm(), dev.get(i).gradNorm(), 1e-5 * Math.abs(host.get(i).gradNorm()),
                            amp + " step " + i + " norm");
                }
                List<Parameter> devParams = t.parameters();
                double worst = 0;
                double moved = 0;
                for (int p = 0; p < hostParams.size(); p++) {
                    for (long e = 0; e < hostParams.get(p).numel(); e++) {
                        worst = Math.max(worst, Math.abs(hostParams.get(p).value().get(e) - devParams.get(p).value().get(e)));
                    }
                }
                assertTrue(worst <= 1e-5, amp + ": SGD weights after " + STEPS + " steps differ by " + worst);
                // the checkpoint of the resident run holds the host's buffers, name for name
                Map<String, StoredTensor> devBuffers = momentumBuffers(t.checkpoint());
                assertEquals(hostBuffers.keySet(), devBuffers.keySet(), amp + ": momentum buffers in the checkpoint");
                assertFalse(devBuffers.isEmpty());
                for (String k : hostBuffers.keySet()) {
                    Tensor h = hostBuffers.get(k).toTensor();
                    Tensor d = devBuffers.get(k).toTensor();
                    for (long e = 0; e < h.numel(); e++) {
                        double tol = 1e-4 * (1 + Math.abs(h.get(e)));
                        assertTrue(Math.abs(h.get(e) - d.get(e)) <= tol, amp + ": " + k + "[" + e + "] host " + h.get(e) + ", device " + d.get(e));
                        moved = Math.max(moved, Math.abs(h.get(e)));
                    }
                }
                assertTrue(moved > 0, amp + ": every momentum buffer is zero");
                if (amp == CompileOptions.Amp.F16) {
                    assertEquals(t.scaler().overflows(), t.scaler().skippedSteps());
                }
            }
        }
    }

    @Test
    void sgdCheckpointFromTheDeviceContinuesBitExactly() {
        Gpu.device();
        for (double momentum : new double[] {0.9, 0}) { // with a buffer, and plain SGD (no device state)
            TrainOptions o = sgd(CompileOptions.Amp.BF16).withOptimizer(TrainOptions.Kind.SGD, momentum);
            LanguageModel lm = LanguageModel.of(BlockConfig.named("cpu-small"), o.vocab(), o.seed());
            Checkpoint mid;
            String straight;
            try (Trainer t = new Trainer(lm, o, Device.cuda(0))) {
                assertTrue(t.resident());
                run(t, 5);
                mid = t.checkpoint();
                run(t, 5);
                straight = t.weightsHash();
            }
            assertEquals(momentum != 0, !momentumBuffers(mid).isEmpty(), "momentum " + momentum + ": buffers in the checkpoint");
            try (Trainer t = new Trainer(lm, o, Device.cuda(0))) {
                t.restore(mid);
                assertEquals(5, t.steps());
                run(t, 5);
                assertEquals(straight, t.weightsHash(), "momentum " + momentum + ": restored from step 5 and trained 5 more");
            }
        }
    }

    private static Map<String, StoredTensor> momentumBuffers(Checkpoint c) {
        Map<String, StoredTensor> m = new TreeMap<>();
        c.tensors().forEach((k, v) -> {
            if (k.contains("momentum_buffer.")) {
                m.put(k, v);
            }
        });
        return m;
    }

    private static List<StepResult> run(Trainer t, int steps) {
        List<StepResult> r = new ArrayList<>();
        for (int i = 0; i < steps; i++) {
            r.add(t.step());
        }
        return r;
    }
}
