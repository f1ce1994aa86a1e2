package dev.lantern.runtime.sched;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * A measured span of one task, in milliseconds from the start of the run.
 *
 * @param task    task id
 * @param kind    kernel or copy
 * @param stream  stream index it ran on
 */
public record Interval(int task, Task.Kind kind, int stream, double startMs, double endMs) {

    public double length() {
        return Math.max(0, endMs - startMs);
    }

    /**
     * {@code overlap_pct} = 100 × (copy time hidden under compute ÷ total copy time): the part of
     * each copy interval covered by the union of kernel intervals. 0 when there is no copy time.
     */
    public static double overlapPct(List<Interval> intervals) {
        List<double[]> compute = new ArrayList<>();
        double copyTotal = 0;
        for (Interval i : intervals) {
            if (i.kind == Task.Kind.KERNEL && i.length() > 0) {
                compute.add(new double[] {i.startMs, i.endMs});
            } else if (i.kind == Task.Kind.COPY) {
                copyTotal += i.length();
            }
        }
        if (copyTotal == 0) {
            return 0;
        }
        // Union of kernel spans: sorted, then merged, so a copy under two kernels counts once.
        compute.sort(Comparator.comparingDouble((double[] a) -> a[0]));
        List<double[]> union = new ArrayList<>();
        for (double[] c : compute) {
            double[] last = union.isEmpty() ? null : union.getLast();
            if (last != null && c[0] <= last[1]) {
                last[1] = Math.max(last[1], c[1]);
            } else {
                union.add(c.clone());
            }
        }
        double hidden = 0;
        for (Interval i : intervals) {
            if (i.kind != Task.Kind.COPY) {
                continue;
            }
            for (double[] u : union) {
                hidden += Math.max(0, Math.min(i.endMs, u[1]) - Math.max(i.startMs, u[0]));
            }
        }
        return 100.0 * hidden / copyTotal;
    }
}
