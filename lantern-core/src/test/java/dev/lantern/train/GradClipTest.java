package dev.lantern.train;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.ir.Shape;
import dev.lantern.tensor.Tensor;
import dev.lantern.train.data.SplitMix64;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Global-norm clipping against a float64 norm, with clip_grad_norm_'s coefficient and clamp. */
class GradClipTest {
    static final String[] NAMES = {"x", "y", "z"};
    static final Shape[] SHAPES = {Shape.of(40_000), Shape.of(3, 7), Shape.of(2)};

    static List<Parameter> params(long seed) {
        SplitMix64 rng = new SplitMix64(seed);
        List<Parameter> ps = TrainFixtures.params(rng, NAMES, SHAPES);
        TrainFixtures.grads(rng, ps);
        return ps;
    }

    static double norm64(List<Parameter> ps) {
        double s = 0;
        for (Parameter p : ps) {
            for (double g : p.grad().toDoubles()) {
                s += g * g;
            }
        }
        return Math.sqrt(s);
    }

    @Test
    void clipsToTheLimitAndReturnsTheNormBefore() {
        List<Parameter> ps = params(5);
        List<float[]> before = new ArrayList<>();
        for (Parameter p : ps) {
            before.add(p.grad().toFloats());
        }
        double exact = norm64(ps);
        float total = GradClip.clipGradNorm(new MultiTensor(ps, 2), 1.5);
        assertEquals(exact, total, Math.ulp((float) exact), "total norm within one f32 rounding of the exact one");
        float coef = 1.5f / (total + 1e-6f);
        for (int i = 0; i < ps.size(); i++) {
            float[] g = ps.get(i).grad().toFloats();
            for (int e = 0; e < g.length; e++) {
                assertEquals(before.get(i)[e] * coef, g[e], 0f);
            }
        }
        assertEquals(1.5, norm64(ps), 1.5 * 1e-6, "the clipped gradients have the limit's norm");
    }

    @Test
    void underTheLimitTheGradientsKeepTheirBits() {
        List<Parameter> ps = params(6);
        Tensor copy = ps.get(0).grad().cast(ps.get(0).grad().dtype());
        float total = GradClip.clipGradNorm(new MultiTensor(ps, 2), 1e9);
        assertEquals(norm64(ps), total, Math.ulp(total));
        assertTrue(TrainFixtures.sameBits(copy, ps.get(0).grad()));
    }

    @Test
    void nonFiniteNormIsReturnedAsItIs() {
        List<Parameter> ps = params(7);
        ps.get(1).grad().set(4, Float.POSITIVE_INFINITY);
        float total = GradClip.clipGradNorm(new MultiTensor(ps, 1), 1.0);
        assertEquals(Float.POSITIVE_INFINITY, total);
        // as torch: coefficient 1 / inf = 0 zeroes the finite gradients
        assertEquals(0f, ps.get(0).grad().get(0));
        assertThrows(IllegalArgumentException.class, () -> GradClip.clipGradNorm(new MultiTensor(ps, 1), 0));
    }
}
