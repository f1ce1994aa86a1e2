package dev.lantern.train;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Half;
import dev.lantern.train.amp.DynamicLossScaler;
import dev.lantern.train.amp.LossScalerConfig;
import dev.lantern.train.amp.UnscaleReport;
import dev.lantern.train.data.SplitMix64;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * Every multi-tensor operation gives the same bits on 1, 2 and 3 threads: parameters of several
 * chunks (so that threads really split the work), one of a single element, one that ends mid-chunk.
 */
class ThreadIndependenceTest {
    static final String[] NAMES = {"emb", "one", "proj", "tail"};
    static final Shape[] SHAPES = {Shape.of(50_000), Shape.of(1), Shape.of(129, 257), Shape.of(MultiTensor.CHUNK + 3)};

    static List<Parameter> fresh(DType low) {
        List<Parameter> ps = TrainFixtures.params(new SplitMix64(7), NAMES, SHAPES);
        if (low == null) {
            return ps;
        }
        List<Parameter> mixed = new ArrayList<>();
        for (Parameter p : ps) {
            mixed.add(Parameter.mixed(p.name(), p.value(), low));
        }
        return mixed;
    }

    /** Runs 5 steps of the optimizer {@code make} builds on {@code threads} threads; returns the params. */
    static List<Parameter> run(int threads, DType low, Function<List<Parameter>, Optimizer> make, boolean clip) {
        List<Parameter> ps = fresh(low);
        Optimizer opt = make.apply(ps);
        assertEquals(threads, opt.plan().threads());
        SplitMix64 rng = new SplitMix64(8);
        for (int t = 0; t < 5; t++) {
            TrainFixtures.grads(rng, ps);
            if (clip) {
                GradClip.clipGradNorm(opt.plan(), 3.0);
            }
            opt.step();
        }
        return ps;
    }

    static void assertSame(List<Parameter> a, List<Parameter> b) {
        for (int i = 0; i < a.size(); i++) {
            assertTrue(TrainFixtures.sameBits(a.get(i).value(), b.get(i).value()), a.get(i).name());
        }
    }

    @Test
    void adamWIsBitIdenticalOnAnyThreadCount() {
        AdamWConfig c = AdamWConfig.defaults(1e-3);
        List<Parameter> one = run(1, null, ps -> new AdamW(ps, c, 1), true);
        assertSame(one, run(2, null, ps -> new AdamW(ps, c, 2), true));
        assertSame(one, run(3, null, ps -> new AdamW(ps, c, 3), true));
    }

    @Test
    void sgdIsBitIdenticalOnAnyThreadCount() {
        SgdConfig c = new SgdConfig(0.01, 0.9, 0, true, 1e-4);
        List<Parameter> one = run(1, null, ps -> new Sgd(ps, c, 1), true);
        assertSame(one, run(2, null, ps -> new Sgd(ps, c, 2), true));
        assertSame(one, run(3, null, ps -> new Sgd(ps, c, 3), true));
    }

    @Test
    void normAndUnscaleAreBitIdenticalOnAnyThreadCount() {
        float[] norms = new float[3];
        List<List<String>> bad = new ArrayList<>();
        for (int threads = 1; threads <= 3; threads++) {
            List<Parameter> ps = fresh(null);
            TrainFixtures.grads(new SplitMix64(9), ps);
            ps.get(2).grad().set(777, Float.POSITIVE_INFINITY);
            ps.get(0).grad().set(49_999, Float.NaN);
            MultiTensor plan = new MultiTensor(ps, threads);
            UnscaleReport r = new DynamicLossScaler(LossScalerConfig.defaults()).unscale(plan);
            bad.add(r.nonFinite());
            ps.get(2).grad().set(777, 0f);
            ps.get(0).grad().set(49_999, 0f);
            norms[threads - 1] = GradClip.globalNorm(plan);
        }
        assertEquals(List.of("emb", "proj"), bad.get(0));
        assertEquals(bad.get(0), bad.get(1));
        assertEquals(bad.get(0), bad.get(2));
        assertEquals(Float.floatToRawIntBits(norms[0]), Float.floatToRawIntBits(norms[1]));
        assertEquals(Float.floatToRawIntBits(norms[0]), Float.floatToRawIntBits(norms[2]));
    }

    @Test
    void mixedPrecisionUpdatesMastersAsF32AndRefreshesTheLowCopies() {
        AdamWConfig c = AdamWConfig.defaults(1e-2);
        List<Parameter> f32 = run(2, null, ps -> new AdamW(ps, c, 2), false);
        for (DType low : new DType[] {DType.BF16, DType.F16}) {
            List<Parameter> mixed = run(2, low, ps -> new AdamW(ps, c, 2), false);
            // the masters follow the f32 run exactly: the low copy is only what the model reads
            assertSame(f32, mixed);
            for (Parameter p : mixed) {
                assertEquals(low, p.low().dtype());
                float[] master = p.value().toFloats();
                float[] copy = p.low().toFloats();
                for (int e = 0; e < master.length; e++) {
                    float want = low == DType.BF16 ? Half.roundBf16(master[e]) : Half.roundF16(master[e]);
                    if (Float.floatToRawIntBits(want) != Float.floatToRawIntBits(copy[e])) {
                        throw new AssertionError(p.name() + "[" + e + "]: low copy " + copy[e] + ", master rounds to " + want);
                    }
                }
            }
        }
    }
}
