package dev.lantern.train.run;

import dev.lantern.checkpoint.Checkpoint;
import dev.lantern.engine.CompileOptions;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.train.TrainStateException;
import java.util.List;
import org.junit.jupiter.api.Test;

import java.util.EnumMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The training loop end to end on a small decoder block (2×64, hidden 64, 4 heads, MLP 128) and the
 * generated task: the loss halves, AMP ends within 5 % of f32, and a run restored from a checkpoint
 * ends bit-identical to the uninterrupted one.
 */
class TrainerTest {
    static final BlockConfig SMALL = BlockConfig.parse("2,64,64,4,128");
    // lr 1e-2: this 64-wide block learns fast enough to halve its loss in 200 steps (the default 1e-3 suits cpu-small)
    static final TrainOptions OPTIONS = TrainOptions.defaults().withThreads(2).withLr(1e-2);

    record Run(double first, double lastMean, long overflows, long skipped, String hash) {}

    static Run train(TrainOptions o, int steps) {
        try (Trainer t = new Trainer(LanguageModel.of(SMALL, o.vocab(), o.seed()), o)) {
            double first = Double.NaN;
            double last = 0;
            for (int i = 0; i < steps; i++) {
                StepResult r = t.step();
                if (i == 0) {
                    first = r.loss();
                }
                if (i >= steps - 10) {
                    last += r.loss() / 10;
                }
            }
            return new Run(first, last, t.scaler() == null ? 0 : t.scaler().overflows(),
                    t.scaler() == null ? 0 : t.scaler().skippedSteps(), t.weightsHash());
        }
    }

    @Test
    void lossHalvesAndAmpEndsWithinFivePercent() {
        Map<CompileOptions.Amp, Run> runs = new EnumMap<>(CompileOptions.Amp.class);
        for (CompileOptions.Amp amp : CompileOptions.Amp.values()) {
            runs.put(amp, train(OPTIONS.withAmp(amp), 200));
            System.out.printf("train %s: %.4f -> %.4f (%d overflows)%n", amp, runs.get(amp).first(), runs.get(amp).lastMean(),
                    runs.get(amp).overflows());
        }
        Run f32 = runs.get(CompileOptions.Amp.NONE);
        assertEquals(Math.log(OPTIONS.vocab()), f32.first(), 0.5, "starts near the uniform loss ln(vocab)");
        assertTrue(f32.lastMean() <= f32.first() / 2, "the loss falls by half: " + f32.first() + " -> " + f32.lastMean());
        for (CompileOptions.Amp amp : new CompileOptions.Amp[] {CompileOptions.Amp.BF16, CompileOptions.Amp.F16}) {
            Run r = runs.get(amp);
            assertEquals(f32.lastMean(), r.lastMean(), 0.05 * f32.lastMean(), amp + " ends within 5 % of f32");
            assertEquals(r.overflows(), r.skipped(), "every overflow skips its step");
            assertNotEquals(f32.hash(), r.hash(), amp + " computes in another precision");
        }
    }

    @Test
    void aRestoredRunEndsBitIdentical() {
        for (CompileOptions.Amp amp : new CompileOptions.Amp[] {CompileOptions.Amp.NONE, CompileOptions.Amp.F16}) {
            TrainOptions o = OPTIONS.withAmp(amp);
            String whole = train(o, 8).hash();
            Checkpoint mid;
            try (Trainer a = new Trainer(LanguageModel.of(SMALL, o.vocab(), o.seed()), o)) {
                for (int i = 0; i < 5; i++) {
                    a.step();
                }
                mid = a.checkpoint();
            }
            try (Trainer b = new Trainer(LanguageModel.of(SMALL, o.vocab(), o.seed()), o)) {
                b.restore(mid);
                assertEquals(5, b.steps());
                while (b.steps() < 8) {
                    b.step();
                }
                assertEquals(whole, b.weightsHash(), amp + ": resumed at step 5, ended as the uninterrupted run");
            }
        }
    }

    @Test
    void aCheckpointKeptInMemoryStaysTheOneOfItsStep() {
        TrainOptions o = OPTIONS;
        Checkpoint mid;
        String straight;
        try (Trainer a = new Trainer(LanguageModel.of(SMALL, o.vocab(), o.seed()), o)) {
            for (int i = 0; i < 3; i++) {
                a.step();
            }
            mid = a.checkpoint();
            for (int i = 0; i < 3; i++) {
                a.step(); // used to change mid's tensors too: they were views of the live weights and moments
            }
            straight = a.weightsHash();
        }
        try (Trainer b = new Trainer(LanguageModel.of(SMALL, o.vocab(), o.seed()), o)) {
            b.restore(mid);
            while (b.steps() < 6) {
                b.step();
            }
            assertEquals(straight, b.weightsHash(), "restored from an in-memory checkpoint taken before three more steps");
        }
    }

    @Test
    void accumulatingTwoMicroBatchesGivesTheirMeanGradientAndLoss() {
        // no clipping (the gradients stay as the step made them) and an lr so small that the weights do not
        // move in f32: the second K = 1 step's gradient is taken at the first step's weights
        TrainOptions o = OPTIONS.withClipNorm(0).withLr(1e-30);
        LanguageModel lm = LanguageModel.of(SMALL, o.vocab(), o.seed());
        double[] loss = new double[2];
        List<float[]> sum = new java.util.ArrayList<>();
        try (Trainer one = new Trainer(lm, o)) {
            for (int s = 0; s < 2; s++) {
                loss[s] = one.step().loss();
                List<dev.lantern.train.Parameter> ps = one.parameters();
                for (int i = 0; i < ps.size(); i++) {
                    float[] g = ps.get(i).grad().toFloats();
                    if (s == 0) {
                        sum.add(g);
                    } else {
                        for (int e = 0; e < g.length; e++) {
                            sum.get(i)[e] += g[e];
                        }
                    }
                }
            }
        }
        try (Trainer two = new Trainer(lm, o.withAccumulate(2))) {
            assertEquals(2L * SMALL.batch() * SMALL.seq(), two.tokensPerStep());
            StepResult r = two.step();
            assertEquals((loss[0] + loss[1]) / 2, r.loss(), 1e-6 * r.loss(), "the micro-batches' mean loss");
            assertNotEquals(loss[0], loss[1], "two different micro-batches");
            List<dev.lantern.train.Parameter> ps = two.parameters();
            for (int i = 0; i < ps.size(); i++) {
                float[] got = ps.get(i).grad().toFloats();
                double worst = 0;
                double scale = 0;
                for (int e = 0; e < got.length; e++) {
                    worst = Math.max(worst, Math.abs(got[e] - sum.get(i)[e] / 2));
                    scale = Math.max(scale, Math.abs(sum.get(i)[e] / 2));
                }
                assertTrue(scale > 0 && worst <= 1e-5 * scale, ps.get(i).name() + ": accumulated gradient off by " + worst + " (max " + scale + ")");
            }
        }
    }

    @Test
    void aRunWithAccumulationResumesBitIdentical() {
        TrainOptions o = OPTIONS.withAccumulate(2).withAmp(CompileOptions.Amp.F16);
        String whole = train(o, 5).hash();
        Checkpoint mid;
        try (Trainer a = new Trainer(LanguageModel.of(SMALL, o.vocab(), o.seed()), o)) {
            a.step();
            a.step();
            mid = a.checkpoint();
        }
        try (Trainer b = new Trainer(LanguageModel.of(SMALL, o.vocab(), o.seed()), o)) {
            b.restore(mid);
            while (b.steps() < 5) {
                b.step();
            }
            assertEquals(whole, b.weightsHash(), "accumulate 2, f16: resumed at step 2, ended as the uninterrupted run");
        }
    }

    @Test
    void aCheckpointOfAnotherModelIsRefused() {
        Checkpoint c;
        try (Trainer a = new Trainer(LanguageModel.of(SMALL, 64, 0), OPTIONS)) {
            c = a.checkpoint();
        }
        try (Trainer b = new Trainer(LanguageModel.of(BlockConfig.parse("2,64,64,4,256"), 64, 0), OPTIONS)) {
            TrainStateException e = assertThrows(TrainStateException.class, () -> b.restore(c));
            assertTrue(e.getMessage().contains("another model"), e.getMessage());
        }
    }
}
