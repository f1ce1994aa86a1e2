package dev.lantern.trace;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Memcpy/compute overlap from intervals of device activity (issue 18): the time during which some
 * copy and some compute both run, over the time during which any copy runs. Both sides are unions
 * of intervals taken over every stream, so two copies at once (two copy streams, or two copy
 * engines) count once, and so do two kernels at once. The same arithmetic serves nsys's trace
 * (lantern-bench's {@code Overlap}) and CUDA-event timings ({@code InputPipeline} in lantern-cuda);
 * times are in any one unit, relative to any one origin.
 */
public final class CopyComputeOverlap {
    /** {@code [start, end)} in one time unit; an empty interval ({@code end == start}) covers nothing. */
    public record Interval(double start, double end) {
        public Interval {
            if (!(end >= start) || !Double.isFinite(start) || !Double.isFinite(end)) {
                throw new IllegalArgumentException("interval [" + start + ", " + end + ") does not end at or after its start");
            }
        }

        public double length() {
            return end - start;
        }
    }

    /**
     * The totals in the intervals' unit: the busy time of compute and of copies (unions), the time
     * both run, and {@code pct} = 100 × overlap ÷ copy busy time, null when there is no copy (no
     * figure, not 0) and 0 when the copies take no time.
     */
    public record Result(int computes, int copies, double computeBusy, double copyBusy, double overlap, Double pct) {}

    private CopyComputeOverlap() {}

    public static Result of(List<Interval> computes, List<Interval> copies) {
        List<Interval> k = union(computes);
        List<Interval> c = union(copies);
        double both = intersection(k, c);
        double copyBusy = length(c);
        Double pct = copies.isEmpty() ? null : copyBusy == 0 ? 0.0 : Math.min(100, 100 * both / copyBusy);
        return new Result(computes.size(), copies.size(), length(k), copyBusy, both, pct);
    }

    /** Sorted, disjoint intervals covering the same time as {@code in} (touching ones merged). */
    public static List<Interval> union(List<Interval> in) {
        List<Interval> s = new ArrayList<>(in);
        s.sort(Comparator.comparingDouble(Interval::start));
        List<Interval> out = new ArrayList<>();
        for (Interval iv : s) {
            if (!out.isEmpty() && iv.start() <= out.getLast().end()) {
                Interval last = out.removeLast();
                out.add(new Interval(last.start(), Math.max(last.end(), iv.end())));
            } else {
                out.add(iv);
            }
        }
        return out;
    }

    /** The time two lists of sorted disjoint intervals ({@link #union}'s) share. */
    public static double intersection(List<Interval> a, List<Interval> b) {
        double sum = 0;
        int i = 0;
        int j = 0;
        while (i < a.size() && j < b.size()) {
            double lo = Math.max(a.get(i).start(), b.get(j).start());
            double hi = Math.min(a.get(i).end(), b.get(j).end());
            if (hi > lo) {
                sum += hi - lo;
            }
            if (a.get(i).end() < b.get(j).end()) {
                i++;
            } else {
                j++;
            }
        }
        return sum;
    }

    /** The total length of sorted disjoint intervals. */
    public static double length(List<Interval> disjoint) {
        double sum = 0;
        for (Interval iv : disjoint) {
            sum += iv.length();
        }
        return sum;
    }
}
