package dev.lantern.train.run;

import dev.lantern.Device;
import dev.lantern.checkpoint.Checkpoint;
import dev.lantern.checkpoint.StoredTensor;
import dev.lantern.engine.CompileOptions;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.train.Parameter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * SGD in the device-resident step, without a GPU: {@link HostDeviceStep} stands in for lantern-cuda's
 * step (the same step graph, the kernels' lines in Java), so what is checked here is the trainer's
 * wiring: SGD opens the resident step with one state slot (none without momentum, two for AdamW),
 * passes the count of applied steps (0 on the first applied one, also after skipped steps), and a
 * resident run ends with the host's weights and momentum buffers, checkpoints them under the host's
 * names, and resumes bit-exactly from its own checkpoint and from a host run's.
 */
class ResidentSgdTest {
    static final BlockConfig SMALL = TrainerTest.SMALL;
    static final TrainOptions SGD = TrainOptions.defaults().withThreads(2).withLr(0.05).withOptimizer(TrainOptions.Kind.SGD, 0.9);

    private static Trainer open(TrainOptions o, Device d) {
        return new Trainer(LanguageModel.of(SMALL, o.vocab(), o.seed()), o, d);
    }

    private static HostDeviceStep last() {
        return HostDeviceStep.OPENED.getLast();
    }

    @Test
    void theResidentStepKeepsTheOptimizersStateSlots() {
        Object[][] cases = {{SGD, 1}, {SGD.withOptimizer(TrainOptions.Kind.SGD, 0), 0}, {TrainOptions.defaults().withThreads(2), 2}};
        for (Object[] c : cases) {
            TrainOptions o = (TrainOptions) c[0];
            try (Trainer t = open(o, Device.cuda(0))) {
                assertTrue(t.resident(), o.optimizer() + " runs in the device step");
                assertEquals((int) c[1], last().spec.slots(), o.optimizer() + " momentum " + o.momentum());
                t.step();
                t.step();
                String kernel = o.optimizer() == TrainOptions.Kind.SGD ? "sgd" : "adamw";
                int first = o.optimizer() == TrainOptions.Kind.SGD ? 0 : 1; // SGD: steps taken; AdamW: the step t
                assertEquals(List.of(kernel + " " + first, kernel + " " + (first + 1)), last().calls);
            }
        }
    }

    @Test
    void residentSgdEndsWithTheHostsWeightsAndBuffers() {
        for (TrainOptions o : List.of(SGD, SGD.withAmp(CompileOptions.Amp.F16))) {
            Run host = run(o, Device.cpu(), 8);
            Run dev = run(o, Device.cuda(0), 8);
            assertEquals(host.losses().size(), dev.losses().size());
            for (int i = 0; i < host.losses().size(); i++) {
                assertEquals(host.losses().get(i), dev.losses().get(i), 1e-6 * Math.abs(host.losses().get(i)), o.amp() + " step " + i);
            }
            assertEquals(host.applied(), dev.applied(), o.amp() + ": applied steps");
            // the optimizer sees the same gradients and computes the same lines: the same bits
            assertEquals(host.hash(), dev.hash(), o.amp() + ": weights");
            assertEquals(host.buffers().keySet(), dev.buffers().keySet(), o.amp() + ": momentum buffers in the checkpoint");
            assertFalse(host.buffers().isEmpty());
            for (String k : host.buffers().keySet()) {
                assertArrayEquals(host.buffers().get(k).bytes(), dev.buffers().get(k).bytes(), o.amp() + ": " + k);
            }
        }
    }

    @Test
    void skippedStepsDoNotCountAsSgdSteps() {
        // f16 with the scaler: runs 0, 1 and 4 overflow and are skipped; the first applied one must start the buffers
        TrainOptions o = SGD.withAmp(CompileOptions.Amp.F16);
        try (Trainer t = open(o, Device.cuda(0))) {
            last().overflowAt = java.util.Set.of(0, 1, 4);
            List<Boolean> applied = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                applied.add(t.step().applied());
            }
            List<String> want = new ArrayList<>();
            for (boolean a : applied) {
                if (a) {
                    want.add("sgd " + want.size());
                }
            }
            assertEquals(want, last().calls, "applied steps " + applied);
            assertEquals(List.of(false, false, true, true, false, true, true, true), applied);
            assertEquals(3, t.scaler().skippedSteps());
            for (Parameter p : t.parameters()) {
                for (long e = 0; e < p.numel(); e++) {
                    assertTrue(Float.isFinite(p.value().get(e)), p.name() + " element " + e + " (the buffers start as NaN on the device)");
                }
            }
        }
    }

    @Test
    void residentSgdResumesBitExactlyFromItsOwnAndTheHostsCheckpoints() {
        for (Device from : List.of(Device.cuda(0), Device.cpu())) {
            Checkpoint mid;
            String straight;
            try (Trainer t = open(SGD, from)) {
                for (int i = 0; i < 4; i++) {
                    t.step();
                }
                mid = t.checkpoint();
                for (int i = 0; i < 4; i++) {
                    t.step();
                }
                straight = t.weightsHash();
            }
            try (Trainer t = open(SGD, Device.cuda(0))) {
                t.restore(mid);
                for (int i = 0; i < 4; i++) {
                    t.step();
                }
                assertEquals(List.of("sgd 4", "sgd 5", "sgd 6", "sgd 7"), last().calls, "the restored step count");
                assertEquals(straight, t.weightsHash(), "restored on the device from a " + from + " run at step 4");
            }
        }
    }

    record Run(List<Double> losses, long applied, String hash, Map<String, StoredTensor> buffers) {}

    private static Run run(TrainOptions o, Device d, int steps) {
        try (Trainer t = open(o, d)) {
            List<Double> losses = new ArrayList<>();
            long applied = 0;
            for (int i = 0; i < steps; i++) {
                StepResult r = t.step();
                losses.add(r.loss());
                applied += r.applied() ? 1 : 0;
            }
            Map<String, StoredTensor> buffers = new TreeMap<>();
            t.checkpoint().tensors().forEach((k, v) -> {
                if (k.contains("momentum_buffer.")) {
                    buffers.put(k, v);
                }
            });
            return new Run(losses, applied, t.weightsHash(), buffers);
        }
    }
}
