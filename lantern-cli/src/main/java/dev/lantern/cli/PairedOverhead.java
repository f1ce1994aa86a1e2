package dev.lantern.cli;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * What an "on" condition costs against "off", from alternating segments of one run
 * ({@code lantern bench overhead}): a noise-resistant estimate with a confidence interval.
 *
 * <p>The run is a sequence of pairs, each an "off" and an "on" segment back to back, the order
 * flipped every pair (off-on, on-off, off-on, ...: ABBA). Each segment is summarised by its median
 * step time, and each pair by the ratio on ÷ off of its two medians, so a slow drift of the machine
 * (clocks, heat, other processes) moves both halves of a pair together instead of landing on one
 * side. Two consecutive pairs make an ABBA block whose ratio is the geometric mean of theirs: under
 * a drift linear in time the two pairs' errors are equal and opposite, so the block cancels it
 * (an odd last pair is a block of its own). The estimate is the median of the blocks' ratios, minus
 * one; its 95 % interval is a percentile bootstrap of that median, resampling blocks with
 * replacement from a fixed seed (so the same timings always give the same interval).
 */
record PairedOverhead(int pairs, int blocks, double overheadPct, double ciLowPct, double ciHighPct, double[] pairOverheadPct) {
    /** Bootstrap resamples: enough that the 2.5 and 97.5 percentiles move by well under their width between seeds. */
    static final int RESAMPLES = 5000;

    /**
     * @param offMs the "off" segment of each pair (its median step time), in run order
     * @param onMs  the "on" segment of each pair
     */
    static PairedOverhead of(double[] offMs, double[] onMs, long seed) {
        if (offMs.length != onMs.length || offMs.length == 0) {
            throw new IllegalArgumentException("need as many on as off segments, at least one of each; given "
                    + offMs.length + " off and " + onMs.length + " on");
        }
        int n = offMs.length;
        double[] logRatio = new double[n];
        double[] pairPct = new double[n];
        for (int i = 0; i < n; i++) {
            if (!(offMs[i] > 0) || !(onMs[i] > 0) || !Double.isFinite(offMs[i]) || !Double.isFinite(onMs[i])) {
                throw new IllegalArgumentException("pair " + i + ": segment medians must be positive times, given off "
                        + offMs[i] + " and on " + onMs[i]);
            }
            logRatio[i] = Math.log(onMs[i] / offMs[i]);
            pairPct[i] = 100 * (onMs[i] / offMs[i] - 1);
        }
        int blocks = (n + 1) / 2;
        double[] block = new double[blocks];
        for (int b = 0; b < blocks; b++) {
            int i = 2 * b;
            block[b] = i + 1 < n ? (logRatio[i] + logRatio[i + 1]) / 2 : logRatio[i];
        }
        double estimate = median(block.clone());
        double[] boot = new double[RESAMPLES];
        SplittableRandom rnd = new SplittableRandom(seed);
        double[] sample = new double[blocks];
        for (int r = 0; r < RESAMPLES; r++) {
            for (int j = 0; j < blocks; j++) {
                sample[j] = block[rnd.nextInt(blocks)];
            }
            boot[r] = median(sample);
        }
        Arrays.sort(boot);
        return new PairedOverhead(n, blocks, pct(estimate), pct(percentile(boot, 0.025)), pct(percentile(boot, 0.975)), pairPct);
    }

    /** Fewer ABBA blocks than this give no verdict: a bootstrap of the median of 3 or 4 values is little more than their range. */
    static final int MIN_BLOCKS = 5;

    /**
     * Whether the interval settles "at most {@code limitPct} slower": {@code within}, {@code above},
     * {@code unresolved} when it straddles the line; {@code too-few-blocks} below {@link #MIN_BLOCKS};
     * {@code implausible} when the whole interval says the "on" side is faster by more than the
     * limit, which serving metrics cannot cause: noise the pairing did not cancel.
     */
    String verdict(double limitPct) {
        if (blocks < MIN_BLOCKS) {
            return "too-few-blocks";
        }
        if (ciHighPct < -limitPct) {
            return "implausible";
        }
        return ciHighPct <= limitPct ? "within" : ciLowPct > limitPct ? "above" : "unresolved";
    }

    private static double pct(double logRatio) {
        return 100 * Math.expm1(logRatio);
    }

    /** The median; the mean of the middle two for an even count. {@code v} is sorted in place. */
    static double median(double[] v) {
        Arrays.sort(v);
        int m = v.length / 2;
        return v.length % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
    }

    /** Linear interpolation between the order statistics of sorted {@code v} (type 7, as R and NumPy default). */
    static double percentile(double[] sorted, double p) {
        double h = (sorted.length - 1) * p;
        int lo = (int) Math.floor(h);
        int hi = Math.min(sorted.length - 1, lo + 1);
        return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
    }
}
