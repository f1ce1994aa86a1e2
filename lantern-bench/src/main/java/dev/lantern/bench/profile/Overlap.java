package dev.lantern.bench.profile;

import dev.lantern.trace.CopyComputeOverlap;
import dev.lantern.trace.CopyComputeOverlap.Interval;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Memcpy/compute overlap from nsys's per-activity trace ({@code cuda_gpu_trace}, older
 * {@code gputrace}): every kernel and memory operation with its start and duration. The figure
 * is the time during which some memcpy and some kernel both run, over the time during which
 * any memcpy runs (both as unions of intervals, so two copies at once count once;
 * {@link CopyComputeOverlap} does the arithmetic). A copy that overlaps nothing gives 0 %; no copy
 * at all gives no figure.
 */
public final class Overlap {
    /** The trace's totals, in microseconds; {@code pct} is null without any memcpy. */
    public record Result(int kernels, int memcpys, double kernelBusyUs, double memcpyBusyUs, double overlapUs, Double pct) {}

    private Overlap() {}

    public static Result fromTrace(String source, String csv) {
        Csv.Table t = Csv.table(source, csv, h -> h.stream().anyMatch(c -> Csv.bare(c).equals("start"))
                && h.stream().anyMatch(c -> Csv.bare(c).equals("duration")));
        int start = t.required("Start", c -> Csv.bare(c).equals("start"));
        int dur = t.required("Duration", c -> Csv.bare(c).equals("duration"));
        int name = t.required("Name", c -> Csv.bare(c).equals("name"));
        double sUs = Units.timeToMicros(Csv.unit(t.header().get(start)), source);
        double dUs = Units.timeToMicros(Csv.unit(t.header().get(dur)), source);
        List<Interval> kernels = new ArrayList<>();
        List<Interval> copies = new ArrayList<>();
        for (Csv.Row r : t.rows()) {
            String n = r.get(name).strip().toLowerCase(Locale.ROOT);
            double s = Units.required(r.get(start), source, r.line(), "Start") * sUs;
            double d = Units.required(r.get(dur), source, r.line(), "Duration") * dUs;
            if (d < 0) {
                throw new ProfileFormatException(source + ": line " + r.line() + ": a negative duration");
            }
            Interval iv = new Interval(s, s + d);
            if (n.startsWith("[cuda memcpy")) {
                copies.add(iv);
            } else if (!n.startsWith("[cuda memset") && !n.startsWith("[")) {
                kernels.add(iv); // "[CUDA memset]" and other bracketed operations are neither
            }
        }
        return of(kernels, copies);
    }

    static Result of(List<Interval> kernels, List<Interval> copies) {
        CopyComputeOverlap.Result r = CopyComputeOverlap.of(kernels, copies);
        return new Result(r.computes(), r.copies(), r.computeBusy(), r.copyBusy(), r.overlap(), r.pct());
    }
}
