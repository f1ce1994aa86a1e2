package dev.lantern.runtime.soak;

/**
 * Percentages in [0, 100] counted in bins of 0.01, so that the median of a six-hour soak's
 * millions of samples needs 80 KiB instead of a list of every sample. The median is exact to
 * the bin: it reports the bin's lower edge.
 */
final class PctHistogram {
    private static final int BINS = 10_001;
    private final long[] counts = new long[BINS];
    private long n;
    private double max;

    void add(double pct) {
        double p = Math.clamp(pct, 0.0, 100.0);
        counts[(int) Math.round(p * 100)]++;
        n++;
        max = Math.max(max, p);
    }

    long count() {
        return n;
    }

    double max() {
        return max;
    }

    /** The lower median: the smallest bin where at least half the samples lie at or below. */
    double median() {
        if (n == 0) {
            return 0;
        }
        long half = (n + 1) / 2;
        long seen = 0;
        for (int i = 0; i < BINS; i++) {
            seen += counts[i];
            if (seen >= half) {
                return i / 100.0;
            }
        }
        return 100.0;
    }
}
