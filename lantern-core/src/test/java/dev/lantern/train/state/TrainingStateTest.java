package dev.lantern.train.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Tensor;
import dev.lantern.train.AdamW;
import dev.lantern.train.AdamWConfig;
import dev.lantern.train.NamedState;
import dev.lantern.train.Optimizer;
import dev.lantern.train.Parameter;
import dev.lantern.train.Sgd;
import dev.lantern.train.SgdConfig;
import dev.lantern.train.TrainFixtures;
import dev.lantern.train.TrainStateException;
import dev.lantern.train.amp.DynamicLossScaler;
import dev.lantern.train.amp.LossScalerConfig;
import dev.lantern.train.data.SplitMix64;
import dev.lantern.train.data.TokenBatch;
import dev.lantern.train.data.TokenTask;
import dev.lantern.train.data.TokenTaskConfig;
import dev.lantern.weights.SafetensorsDType;
import dev.lantern.weights.SafetensorsFile;
import dev.lantern.weights.SafetensorsWriter;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run saved to a safetensors checkpoint mid-way and resumed in fresh objects ends bit-identical
 * to the run that never stopped: weights, moments, scaler, data stream and generator alike.
 */
class TrainingStateTest {
    static final String[] NAMES = {"embed", "head"};
    static final Shape[] SHAPES = {Shape.of(24, 16), Shape.of(20_000)};
    static final TokenTaskConfig TASK = TokenTaskConfig.of(24, 2, 16, 11);
    static final LossScalerConfig SCALER = new LossScalerConfig(1024f, 2f, 0.5f, 3, 1f, 0);

    /** A training run with a made-up gradient that depends on the low weights, the batch and the loop's generator. */
    static final class Run {
        final List<Parameter> ps;
        final Optimizer opt;
        final DynamicLossScaler scaler = new DynamicLossScaler(SCALER);
        SplitMix64 rng = new SplitMix64(99);
        TokenTask task = TokenTask.start(TASK);
        long step;

        Run(boolean sgd) {
            List<Parameter> init = TrainFixtures.params(new SplitMix64(1), NAMES, SHAPES);
            ps = init.stream().map(p -> Parameter.mixed(p.name(), p.value(), DType.F16)).toList();
            opt = sgd ? new Sgd(ps, new SgdConfig(0.05, 0.9, 0, true, 1e-3), 2)
                    : new AdamW(ps, AdamWConfig.defaults(1e-2), 2);
        }

        void train(int steps) {
            for (int s = 0; s < steps; s++) {
                TokenBatch b = task.next();
                double[] tok = b.tokens().toDoubles();
                float noise = (float) (rng.nextDouble() - 0.5);
                float scale = scaler.scale();
                for (Parameter p : ps) {
                    for (long e = 0; e < p.numel(); e++) {
                        float target = (float) tok[(int) (e % tok.length)] / 24f;
                        p.grad().set(e, (p.low().get(e) - target + noise) * scale);
                    }
                }
                if (rng.nextInt(4) == 0) {
                    ps.get(1).grad().set(7, Float.POSITIVE_INFINITY);
                }
                scaler.step(opt, 1.0);
                step++;
            }
        }

        TrainingState capture() {
            return TrainingState.capture(step, opt, scaler, rng, task);
        }
    }

    static Path save(Run r, Path dir) {
        SafetensorsWriter w = new SafetensorsWriter();
        for (Parameter p : r.ps) {
            w.add("model." + p.name(), SafetensorsDType.F32, new long[] {p.numel()}, p.value().segment().asSlice(0, p.numel() * 4));
        }
        r.capture().addTo(w);
        Path file = dir.resolve("ckpt.safetensors");
        w.write(file);
        return file;
    }

    static Run load(Path file, boolean sgd) {
        Run r = new Run(sgd);
        try (SafetensorsFile f = SafetensorsFile.open(file)) {
            for (Parameter p : r.ps) {
                p.value().segment().asSlice(0, p.numel() * 4).copyFrom(f.tensor("model." + p.name()).data());
                p.refreshLow(0, p.numel());
            }
            TrainingState s = TrainingState.readFrom(f);
            s.restore(r.opt, r.scaler);
            r.rng = new SplitMix64(s.rngState());
            r.task = TokenTask.resume(TASK, s.data());
            r.step = s.step();
        }
        return r;
    }

    static void assertSameRun(Run a, Run b) {
        for (int i = 0; i < a.ps.size(); i++) {
            assertTrue(TrainFixtures.sameBits(a.ps.get(i).value(), b.ps.get(i).value()), a.ps.get(i).name());
            assertTrue(a.ps.get(i).low().segment().mismatch(b.ps.get(i).low().segment()) == -1, "low copy " + a.ps.get(i).name());
        }
        NamedState sa = a.opt.state();
        NamedState sb = b.opt.state();
        assertEquals(sa.metadata(), sb.metadata());
        for (String name : sa.tensors().keySet()) {
            assertTrue(TrainFixtures.sameBits(sa.tensor(name), sb.tensor(name)), name);
        }
        assertEquals(a.scaler.state(), b.scaler.state());
        assertEquals(a.task.state(), b.task.state());
        assertEquals(a.rng.state(), b.rng.state());
        assertEquals(a.step, b.step);
    }

    @Test
    void resumedAdamWRunIsBitIdentical(@TempDir Path dir) {
        resumes(false, dir);
    }

    @Test
    void resumedSgdRunIsBitIdentical(@TempDir Path dir) {
        resumes(true, dir);
    }

    static void resumes(boolean sgd, Path dir) {
        Run straight = new Run(sgd);
        straight.train(14);
        Run first = new Run(sgd);
        first.train(6);
        Run resumed = load(save(first, dir), sgd);
        assertSameRun(first, resumed);
        resumed.train(8);
        assertSameRun(straight, resumed);
        assertTrue(straight.scaler.overflows() > 0, "the run should have met an overflow");
        assertTrue(straight.scaler.history().size() > 1);
    }

    @Test
    void namedStateRoundTripAndErrors() {
        Run r = new Run(false);
        r.train(3);
        TrainingState s = r.capture();
        NamedState n = s.toNamedState();
        assertEquals(Map.of("optim.exp_avg.embed", 0, "optim.exp_avg_sq.embed", 1, "optim.exp_avg.head", 2,
                "optim.exp_avg_sq.head", 3).keySet(), n.tensors().keySet());
        TrainingState back = TrainingState.fromNamedState(n);
        assertEquals(s.step(), back.step());
        assertEquals(s.scaler(), back.scaler());
        assertEquals(s.rngState(), back.rngState());
        assertEquals(s.data(), back.data());
        assertEquals(s.optimizer().metadata(), back.optimizer().metadata());

        Map<String, String> meta = new HashMap<>(n.metadata());
        meta.put("train.version", "0");
        assertThrows(TrainStateException.class, () -> TrainingState.fromNamedState(new NamedState(n.tensors(), meta)));

        Map<String, Tensor> wrong = new HashMap<>(n.tensors());
        wrong.put("optim.exp_avg.head", Tensor.allocate(DType.F32, Shape.of(3)));
        TrainingState bad = TrainingState.fromNamedState(new NamedState(wrong, n.metadata()));
        Run target = new Run(false);
        target.train(5);
        long stepsBefore = target.opt.steps();
        assertTrue(stepsBefore > 0, "the moments must hold something to be overwritten: " + target.scaler.state());
        Tensor embedBefore = target.opt.state().tensor("exp_avg.embed").cast(DType.F32);
        TrainStateException e = assertThrows(TrainStateException.class, () -> bad.restore(target.opt, target.scaler));
        assertTrue(e.getMessage().contains("exp_avg.head"), e.getMessage());
        // checked before anything is copied: the first parameter's moment is untouched
        assertTrue(TrainFixtures.sameBits(embedBefore, target.opt.state().tensor("exp_avg.embed")));
        assertEquals(stepsBefore, target.opt.steps());
        assertThrows(TrainStateException.class, () -> s.restore(new Run(true).opt, new DynamicLossScaler(SCALER)));
        assertThrows(TrainStateException.class, () -> s.restore(new Run(false).opt, null));
    }
}
