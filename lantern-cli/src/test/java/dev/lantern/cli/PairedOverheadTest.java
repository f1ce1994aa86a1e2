package dev.lantern.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@code bench overhead}'s estimator on seeded synthetic timings with a known overhead: segment
 * medians laid out as the command runs them (pairs off-on, on-off, ...), with drift and noise.
 */
class PairedOverheadTest {
    /** Segment medians of {@code pairs} ABBA pairs: base 10 ms × exp(drift × segment index) × (1 + overhead on) × lognormal noise. */
    private static double[][] synthetic(int pairs, double overheadPct, double driftPerSegment, double noise, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        double[] off = new double[pairs];
        double[] on = new double[pairs];
        int t = 0;
        for (int p = 0; p < pairs; p++) {
            for (int half = 0; half < 2; half++) {
                boolean exporterOn = (half == 1) == (p % 2 == 0);
                double ms = 10 * Math.exp(driftPerSegment * t++) * Math.exp(noise * gaussian(rnd));
                if (exporterOn) {
                    on[p] = ms * (1 + overheadPct / 100);
                } else {
                    off[p] = ms;
                }
            }
        }
        return new double[][] {off, on};
    }

    private static double gaussian(SplittableRandom rnd) {
        return Math.sqrt(-2 * Math.log(1 - rnd.nextDouble())) * Math.cos(2 * Math.PI * rnd.nextDouble());
    }

    @Test
    void abbaBlocksCancelADriftThatSinglePairsDoNot() {
        // no noise, a drift of 0.5 % a segment (10 % over the run): every block is exactly the overhead
        double[][] t = synthetic(20, 0.7, 0.005, 0, 1);
        PairedOverhead e = PairedOverhead.of(t[0], t[1], 3);
        assertEquals(0.7, e.overheadPct(), 1e-9);
        assertEquals(0.7, e.ciLowPct(), 1e-9);
        assertEquals(0.7, e.ciHighPct(), 1e-9);
        assertEquals(10, e.blocks());
        // the pairs alone are off by the drift, in turn one way and the other (+1.2 %, +0.2 %)
        assertEquals(100 * (1.007 * Math.exp(0.005) - 1), e.pairOverheadPct()[0], 1e-9);
        assertEquals(100 * (1.007 * Math.exp(-0.005) - 1), e.pairOverheadPct()[1], 1e-9);
    }

    @Test
    void anOddLastPairIsABlockOfItsOwn() {
        double[][] t = synthetic(3, 2.0, 0, 0, 1);
        PairedOverhead e = PairedOverhead.of(t[0], t[1], 3);
        assertEquals(2, e.blocks());
        assertEquals(3, e.pairs());
        assertEquals(2.0, e.overheadPct(), 1e-9);
    }

    @Test
    void recoversAKnownOverheadUnderNoiseAndItsIntervalCoversIt() {
        // 1 % noise on each segment's median, a slow drift, 0.6 % overhead: 40 pairs, as the default run
        int covered = 0;
        double sum = 0;
        double squares = 0;
        int seeds = 200;
        for (long seed = 0; seed < seeds; seed++) {
            double[][] t = synthetic(40, 0.6, 0.001, 0.01, seed);
            PairedOverhead e = PairedOverhead.of(t[0], t[1], seed);
            sum += e.overheadPct();
            squares += (e.overheadPct() - 0.6) * (e.overheadPct() - 0.6);
            assertTrue(e.ciLowPct() <= e.overheadPct() && e.overheadPct() <= e.ciHighPct(), e.toString());
            covered += e.ciLowPct() <= 0.6 && 0.6 <= e.ciHighPct() ? 1 : 0;
        }
        // a percentile bootstrap of a median from 20 blocks undercovers a little; 85 % of 200 is far from chance misses
        assertTrue(covered >= 0.85 * seeds, covered + " of " + seeds + " intervals hold the true 0.6 %");
        // no bias: the mean estimate within 0.06 points (4 standard errors) of the truth; the spread as the noise implies:
        // a block's log-ratio has sd 1 %, the median of 20 blocks about 1.25 × 1 % / sqrt(20) = 0.28 points
        assertEquals(0.6, sum / seeds, 0.06, "mean estimate");
        double rms = Math.sqrt(squares / seeds);
        assertTrue(rms < 0.35, "rms error " + rms);
    }

    @Test
    void theVerdictSaysWhetherTheOnePercentLineIsSettled() {
        double[][] small = synthetic(40, 0.2, 0.001, 0.003, 5);
        assertEquals("within", PairedOverhead.of(small[0], small[1], 5).verdict(1.0));
        double[][] large = synthetic(40, 3.0, 0.001, 0.003, 5);
        PairedOverhead l = PairedOverhead.of(large[0], large[1], 5);
        assertEquals("above", l.verdict(1.0), l.toString());
        double[][] noisy = synthetic(12, 1.0, 0, 0.05, 5);
        PairedOverhead n = PairedOverhead.of(noisy[0], noisy[1], 5);
        assertEquals("unresolved", n.verdict(1.0), n.toString());
        assertTrue(n.ciHighPct() - n.ciLowPct() > 2, "5 % noise, 6 blocks: a wide interval " + n);
        double[][] few = synthetic(8, 0.0, 0, 0.001, 5);
        assertEquals("too-few-blocks", PairedOverhead.of(few[0], few[1], 5).verdict(1.0), "4 blocks");
        double[][] faster = synthetic(20, -5.0, 0, 0.003, 5);
        assertEquals("implausible", PairedOverhead.of(faster[0], faster[1], 5).verdict(1.0), "5 % faster with the exporter on");
    }

    @Test
    void theSameTimingsAndSeedGiveTheSameInterval() {
        double[][] t = synthetic(30, 0.5, 0, 0.02, 9);
        PairedOverhead a = PairedOverhead.of(t[0], t[1], 42);
        PairedOverhead b = PairedOverhead.of(t[0].clone(), t[1].clone(), 42);
        assertEquals(a.ciLowPct(), b.ciLowPct(), 0);
        assertEquals(a.ciHighPct(), b.ciHighPct(), 0);
    }

    @Test
    void medianAndPercentile() {
        assertEquals(2.5, PairedOverhead.median(new double[] {4, 1, 3, 2}), 0);
        assertEquals(3, PairedOverhead.median(new double[] {5, 3, 1}), 0);
        double[] sorted = {0, 10, 20, 30, 40};
        assertEquals(0, PairedOverhead.percentile(sorted, 0), 0);
        assertEquals(40, PairedOverhead.percentile(sorted, 1), 0);
        assertEquals(1, PairedOverhead.percentile(sorted, 0.025), 1e-12);
        assertEquals(39, PairedOverhead.percentile(sorted, 0.975), 1e-12);
        assertArrayEquals(new double[] {7}, new double[] {PairedOverhead.percentile(new double[] {7}, 0.5)});
    }

    @Test
    void badSegmentsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> PairedOverhead.of(new double[] {1, 2}, new double[] {1}, 1));
        assertThrows(IllegalArgumentException.class, () -> PairedOverhead.of(new double[0], new double[0], 1));
        assertThrows(IllegalArgumentException.class, () -> PairedOverhead.of(new double[] {0}, new double[] {1}, 1));
        assertThrows(IllegalArgumentException.class, () -> PairedOverhead.of(new double[] {1}, new double[] {Double.NaN}, 1));
    }
}
