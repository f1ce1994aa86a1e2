package dev.lantern.train;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.ir.Shape;
import dev.lantern.train.data.SplitMix64;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * SGD and AdamW against float64 evaluations of PyTorch's update formulas, over several steps on
 * seeded random parameters and gradients (magnitudes 2^-14 to 2^3, so that eps, the bias
 * corrections and the decay all matter somewhere).
 */
class OptimizerReferenceTest {
    static final String[] NAMES = {"a", "b", "c"};
    static final Shape[] SHAPES = {Shape.of(300), Shape.of(17, 5), Shape.of(1)};
    static final int STEPS = 8;

    /** The parameters as doubles, stepped by {@code update} (per step, per parameter). */
    interface Reference {
        void step(int t, double[] p, double[] g, double[][] state);
    }

    static double[][] stepBoth(Optimizer opt, List<Parameter> ps, SplitMix64 rng, Reference ref, int stateSlots) {
        double[][] p64 = new double[ps.size()][];
        double[][][] st = new double[ps.size()][stateSlots][];
        for (int i = 0; i < ps.size(); i++) {
            p64[i] = ps.get(i).value().toDoubles();
            for (int s = 0; s < stateSlots; s++) {
                st[i][s] = new double[p64[i].length];
            }
        }
        for (int t = 1; t <= STEPS; t++) {
            TrainFixtures.grads(rng, ps);
            for (int i = 0; i < ps.size(); i++) {
                ref.step(t, p64[i], ps.get(i).grad().toDoubles(), st[i]);
            }
            opt.step();
        }
        return p64;
    }

    static void assertClose(List<Parameter> ps, double[][] p64, double rel, double abs) {
        double worst = 0;
        for (int i = 0; i < ps.size(); i++) {
            float[] got = ps.get(i).value().toFloats();
            for (int e = 0; e < got.length; e++) {
                double err = Math.abs(got[e] - p64[i][e]) / (abs + rel * Math.abs(p64[i][e]));
                worst = Math.max(worst, err);
                if (err > 1) {
                    throw new AssertionError(ps.get(i).name() + "[" + e + "]: " + got[e] + " vs float64 " + p64[i][e]);
                }
            }
        }
        assertTrue(worst > 0, "f32 and f64 agree exactly everywhere: the reference is not independent");
    }

    @ParameterizedTest
    @ValueSource(doubles = {0.0, 0.05})
    void adamWMatchesFloat64(double wd) {
        AdamWConfig c = new AdamWConfig(2e-3, 0.9, 0.99, 1e-8, wd);
        SplitMix64 rng = new SplitMix64(41);
        List<Parameter> ps = TrainFixtures.params(rng, NAMES, SHAPES);
        double[][] p64 = stepBoth(new AdamW(ps, c, 2), ps, rng, (t, p, g, s) -> {
            double bc1 = 1 - Math.pow(c.beta1(), t);
            double bc2 = 1 - Math.pow(c.beta2(), t);
            for (int e = 0; e < p.length; e++) {
                p[e] *= 1 - c.lr() * c.weightDecay();
                s[0][e] = c.beta1() * s[0][e] + (1 - c.beta1()) * g[e];
                s[1][e] = c.beta2() * s[1][e] + (1 - c.beta2()) * g[e] * g[e];
                p[e] -= c.lr() / bc1 * s[0][e] / (Math.sqrt(s[1][e]) / Math.sqrt(bc2) + c.eps());
            }
        }, 2);
        // each step moves p by about lr; f32 keeps it to a few ulps of |p| plus a few ulps of lr
        assertClose(ps, p64, 1e-6, 1e-8);
    }

    @ParameterizedTest
    @ValueSource(strings = {"plain", "momentum", "nesterov", "dampening"})
    void sgdMatchesFloat64(String kind) {
        SgdConfig c = switch (kind) {
            case "plain" -> new SgdConfig(0.01, 0, 0, false, 0.01);
            case "momentum" -> new SgdConfig(0.01, 0.9, 0, false, 0.02);
            case "nesterov" -> new SgdConfig(0.01, 0.9, 0, true, 0);
            default -> new SgdConfig(0.01, 0.7, 0.3, false, 0);
        };
        SplitMix64 rng = new SplitMix64(42);
        List<Parameter> ps = TrainFixtures.params(rng, NAMES, SHAPES);
        double[][] p64 = stepBoth(new Sgd(ps, c, 2), ps, rng, (t, p, g, s) -> {
            for (int e = 0; e < p.length; e++) {
                double d = g[e] + c.weightDecay() * p[e];
                if (c.momentum() != 0) {
                    s[0][e] = t == 1 ? d : c.momentum() * s[0][e] + (1 - c.dampening()) * d;
                    d = c.nesterov() ? d + c.momentum() * s[0][e] : s[0][e];
                }
                p[e] -= c.lr() * d;
            }
        }, 1);
        // updates of up to lr * 8 * 10 per step against |p| near 1: a few ulps of the larger
        assertClose(ps, p64, 1e-6, 1e-6);
    }

    @Test
    void adamWDecayIsDecoupled() {
        // zero gradients: the moments stay 0, the Adam term is 0 / (0 + eps) = 0, only the decay acts
        SplitMix64 rng = new SplitMix64(43);
        List<Parameter> ps = TrainFixtures.params(rng, NAMES, SHAPES);
        float[] before = ps.get(0).value().toFloats();
        AdamW opt = new AdamW(ps, new AdamWConfig(0.1, 0.9, 0.999, 1e-8, 0.5), 1);
        opt.step();
        float[] after = ps.get(0).value().toFloats();
        for (int e = 0; e < before.length; e++) {
            assertEquals(before[e] * (float) (1 - 0.1 * 0.5), after[e], 0f);
        }
    }

    @Test
    void learningRateChangeTakesEffect() {
        SplitMix64 rng = new SplitMix64(44);
        List<Parameter> ps = TrainFixtures.params(rng, NAMES, SHAPES);
        TrainFixtures.grads(rng, ps);
        float[] before = ps.get(0).value().toFloats();
        float g0 = ps.get(0).grad().get(0);
        Sgd opt = new Sgd(ps, new SgdConfig(0.5, 0, 0, false, 0), 1);
        opt.setLr(0.25);
        opt.step();
        assertEquals(Math.fma(-0.25f, g0, before[0]), ps.get(0).value().get(0), 0f);
        assertEquals(0.25, opt.state().doubleValue("lr"));
    }
}
