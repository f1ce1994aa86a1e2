package dev.lantern.train.amp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.ir.Shape;
import dev.lantern.train.MultiTensor;
import dev.lantern.train.Parameter;
import dev.lantern.train.Sgd;
import dev.lantern.train.SgdConfig;
import dev.lantern.train.TrainFixtures;
import dev.lantern.train.amp.ScaleEvent.Kind;
import dev.lantern.train.data.SplitMix64;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The scaler follows a scripted run of injected infinities exactly: skipped steps equal injected
 * overflows, the scale history is the one GradScaler's rules give, growth comes after exactly N
 * clean steps, the floor holds, and the recovery policy fires at exactly K.
 */
class DynamicLossScalerTest {
    static final String[] NAMES = {"a", "b", "c"};
    static final Shape[] SHAPES = {Shape.of(20_000), Shape.of(5), Shape.of(3, 3)};

    /** One scripted training run: an SGD over three parameters and a scaler. */
    static final class Run {
        final List<Parameter> ps = TrainFixtures.params(new SplitMix64(3), NAMES, SHAPES);
        final Sgd opt = new Sgd(ps, new SgdConfig(0.01, 0.9, 0, false, 0), 2);
        final DynamicLossScaler scaler;
        final SplitMix64 rng = new SplitMix64(4);
        int injected;

        Run(LossScalerConfig config) {
            scaler = new DynamicLossScaler(config);
        }

        /** One step whose gradients hold an inf (or NaN) in each named parameter, scaled as a backward would leave them. */
        DynamicLossScaler.ScaledStep step(String... overflowing) {
            TrainFixtures.grads(rng, ps);
            float s = scaler.scale();
            List<float[]> before = new ArrayList<>();
            for (Parameter p : ps) {
                for (long e = 0; e < p.numel(); e++) {
                    p.grad().set(e, p.grad().get(e) * s);
                }
                before.add(p.value().toFloats());
            }
            for (String name : overflowing) {
                Parameter p = ps.get(List.of(NAMES).indexOf(name));
                p.grad().set(p.numel() - 1 - injected % p.numel(), injected % 2 == 0 ? Float.POSITIVE_INFINITY : Float.NaN);
            }
            if (overflowing.length > 0) {
                injected++;
            }
            long stepsBefore = opt.steps();
            DynamicLossScaler.ScaledStep r = scaler.step(opt, 0);
            assertEquals(overflowing.length == 0, r.applied());
            assertEquals(List.of(overflowing), r.unscale().nonFinite());
            assertEquals(stepsBefore + (r.applied() ? 1 : 0), opt.steps());
            if (!r.applied()) {
                for (int i = 0; i < ps.size(); i++) {
                    assertTrue(java.util.Arrays.equals(before.get(i), ps.get(i).value().toFloats()), "a skipped step changed " + NAMES[i]);
                }
            }
            return r;
        }
    }

    @Test
    void followsAScriptedRunOfOverflowsExactly() {
        Run run = new Run(new LossScalerConfig(8f, 2f, 0.5f, 3, 1f, 4));
        String[][] script = {{}, {}, {}, {"b"}, {}, {"a", "c"}, {"c"}, {"a"}, {}, {"b", "c"}, {"a"}, {"b"}};
        float[] scaleAfter = {8, 8, 16, 8, 8, 4, 2, 1, 1, 1, 1, 1};
        int[] trackerAfter = {1, 2, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
        for (int i = 0; i < script.length; i++) {
            run.step(script[i]);
            assertEquals(scaleAfter[i], run.scaler.scale(), "scale after update " + (i + 1));
            assertEquals(trackerAfter[i], run.scaler.growthTracker(), "growth tracker after update " + (i + 1));
        }
        assertEquals(run.injected, run.scaler.overflows());
        assertEquals(run.injected, run.scaler.skippedSteps());
        assertEquals(script.length - run.injected, run.opt.steps());
        assertEquals(3, run.scaler.consecutiveOverflows());
        assertEquals(List.of(new ScaleEvent(3, Kind.GROWTH, 16), new ScaleEvent(4, Kind.BACKOFF, 8),
                new ScaleEvent(6, Kind.BACKOFF, 4), new ScaleEvent(7, Kind.BACKOFF, 2), new ScaleEvent(8, Kind.BACKOFF, 1),
                new ScaleEvent(10, Kind.FLOOR, 1), new ScaleEvent(11, Kind.FLOOR, 1), new ScaleEvent(12, Kind.FLOOR, 1)),
                run.scaler.history());

        // the 4th overflow in a row: the recovery policy fires, naming where the streak began
        LossScaleException e = assertThrows(LossScaleException.class, () -> run.step("c"));
        OverflowReport r = e.report();
        assertEquals(4, r.consecutive());
        assertEquals(10, r.firstStep());
        assertEquals(List.of("b", "c"), r.firstTensors());
        assertEquals(List.of("c"), r.lastTensors());
        assertEquals(1f, r.scale());
        assertEquals(new ScaleEvent(13, Kind.FLOOR, 1), r.history().getLast());
        assertEquals(run.injected, run.scaler.skippedSteps());
        assertTrue(e.getMessage().contains("4 overflowing steps in a row since update 10"), e.getMessage());
    }

    @Test
    void unscaleMultipliesByTheInverseScale() {
        Run run = new Run(new LossScalerConfig(1024f, 2f, 0.5f, 2000, 1f, 0));
        TrainFixtures.grads(run.rng, run.ps);
        float[] g = run.ps.get(0).grad().toFloats();
        UnscaleReport r = run.scaler.unscale(new MultiTensor(run.ps, 2));
        assertTrue(r.finite());
        assertEquals(1f / 1024f, r.invScale());
        float[] u = run.ps.get(0).grad().toFloats();
        for (int e = 0; e < g.length; e++) {
            assertEquals(g[e] * (1f / 1024f), u[e], 0f);
        }
    }

    @Test
    void growsAfterExactlyTheDefault2000CleanSteps() {
        DynamicLossScaler s = new DynamicLossScaler(LossScalerConfig.defaults());
        assertEquals(65536f, s.scale());
        UnscaleReport clean = new UnscaleReport(List.of(), 1f / 65536f);
        for (int i = 0; i < 1999; i++) {
            s.update(clean);
        }
        assertEquals(65536f, s.scale());
        assertEquals(1999, s.growthTracker());
        s.update(clean);
        assertEquals(131072f, s.scale());
        assertEquals(0, s.growthTracker());
        // an overflow resets the count: 2000 more clean steps are needed
        s.update(new UnscaleReport(List.of("w"), 1f));
        assertEquals(65536f, s.scale());
        for (int i = 0; i < 1999; i++) {
            s.update(clean);
        }
        assertEquals(65536f, s.scale());
        s.update(clean);
        assertEquals(131072f, s.scale());
        assertEquals(List.of(new ScaleEvent(2000, Kind.GROWTH, 131072f), new ScaleEvent(2001, Kind.BACKOFF, 65536f),
                new ScaleEvent(4001, Kind.GROWTH, 131072f)), s.history());
    }

    @Test
    void neverGrowsToInfinity() {
        DynamicLossScaler s = new DynamicLossScaler(new LossScalerConfig(0x1p127f, 2f, 0.5f, 1, 1f, 0));
        s.update(new UnscaleReport(List.of(), 0x1p-127f));
        assertEquals(0x1p127f, s.scale());
        assertEquals(List.of(), s.history());
    }

    @Test
    void bf16KeepsAFixedScaleButStillSkipsAndGivesUp() {
        Run run = new Run(LossScalerConfig.forType(dev.lantern.ir.DType.BF16).withMaxConsecutiveOverflows(2));
        run.step();
        run.step("a");
        assertEquals(1f, run.scaler.scale());
        assertEquals(1, run.scaler.skippedSteps());
        assertThrows(LossScaleException.class, () -> run.step("b"));
    }

    @Test
    void stateRoundTripResumesMidStreakExactly() {
        LossScalerConfig c = new LossScalerConfig(64f, 2f, 0.5f, 2, 2f, 5);
        Run a = new Run(c);
        String[][] script = {{}, {}, {"a"}, {}, {"c"}, {"b"}};
        for (String[] s : script) {
            a.step(s);
        }
        ScalerState saved = a.scaler.state();
        ScalerState parsed = ScalerState.fromNamedState(saved.toNamedState());
        assertEquals(saved, parsed);
        DynamicLossScaler b = new DynamicLossScaler(c);
        b.loadState(parsed);
        assertEquals(saved, b.state());
        UnscaleReport over = new UnscaleReport(List.of("a"), 1f);
        for (int i = 0; i < 2; i++) {
            a.scaler.update(over);
            b.update(over);
            assertEquals(a.scaler.state(), b.state());
        }
        LossScaleException ea = assertThrows(LossScaleException.class, () -> a.scaler.update(over));
        LossScaleException eb = assertThrows(LossScaleException.class, () -> b.update(over));
        assertEquals(ea.report(), eb.report());
        assertEquals(List.of("c"), eb.report().firstTensors());
        assertEquals(5, eb.report().firstStep());
    }
}
