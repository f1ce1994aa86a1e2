package dev.lantern.bench.profile;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One normalized profile of a block's forwards: nsys's kernel and memory summaries, the
 * memcpy/compute overlap from its trace (or, without one, from CUDA events: {@link EventsOverlap}),
 * and ncu's per-kernel figures, joined by kernel name.
 * Any part may be missing (a tool not installed, a step that timed out): its fields are null and
 * {@code missing} says why, so a partial run still gives a file. Times are microseconds.
 */
public final class ProfileReport {
    /** Where and what was profiled; strings may be null (unknown). */
    public record Meta(String date, String commit, String gpu, String driver, String block, int forwards, int ncuForwards,
            String nsysVersion, String ncuVersion, String command) {}

    private final Meta meta;
    private final List<NsysSummary.Entry> kernels;
    private final List<NsysSummary.Entry> memoryOps;
    private final Overlap.Result overlap;
    private final List<NcuSummary.Kernel> ncu;
    private final List<String> missing;
    private final EventsOverlap events;

    /** Null arguments are parts not measured; {@code missing} says why each is absent. */
    public ProfileReport(Meta meta, List<NsysSummary.Entry> kernels, List<NsysSummary.Entry> memoryOps, Overlap.Result overlap,
            List<NcuSummary.Kernel> ncu, List<String> missing) {
        this(meta, kernels, memoryOps, overlap, ncu, null, missing);
    }

    /**
     * As above, with the overlap measured from CUDA events ({@code events}, may be null): the totals'
     * overlap is nsys's when its trace was read, else the events' pipelined run's, and
     * {@code overlap_method} says which.
     */
    public ProfileReport(Meta meta, List<NsysSummary.Entry> kernels, List<NsysSummary.Entry> memoryOps, Overlap.Result overlap,
            List<NcuSummary.Kernel> ncu, EventsOverlap events, List<String> missing) {
        this.events = events;
        this.meta = meta;
        this.kernels = kernels;
        this.memoryOps = memoryOps;
        this.overlap = overlap;
        this.ncu = ncu;
        this.missing = List.copyOf(missing);
    }

    public Map<String, Object> toMap() {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("profile", "scripts/gpu-profile: nsys and ncu on the compiled bf16 forward of one block");
        root.put("date", meta.date());
        root.put("commit", meta.commit());
        root.put("gpu", meta.gpu());
        root.put("driver", meta.driver());
        root.put("block", meta.block());
        root.put("forwards", meta.forwards());
        root.put("ncu_forwards", meta.ncuForwards());
        root.put("nsys", meta.nsysVersion());
        root.put("ncu", meta.ncuVersion());
        root.put("command", meta.command());
        root.put("totals", totals());
        root.put("kernels", kernelRows());
        root.put("overlap_events", events == null ? null : events.toMap());
        root.put("memory_ops", memoryOps == null ? null : memoryOps.stream().map(e -> entry("operation", e, null)).toList());
        root.put("missing", missing);
        return root;
    }

    public String toJson() {
        return JsonWriter.write(toMap());
    }

    private Map<String, Object> totals() {
        Map<String, Object> t = new LinkedHashMap<>();
        Double kernelUs = kernels == null ? null : kernels.stream().mapToDouble(NsysSummary.Entry::totalUs).sum();
        t.put("kernel_us", kernelUs);
        t.put("kernel_us_per_forward", kernelUs == null || meta.forwards() <= 0 ? null : kernelUs / meta.forwards());
        t.put("kernel_launches", kernels == null ? null : kernels.stream().mapToLong(NsysSummary.Entry::calls).sum());
        t.put("memcpy_us", memoryOps == null ? null
                : memoryOps.stream().filter(e -> NsysSummary.isMemcpy(e.name())).mapToDouble(NsysSummary.Entry::totalUs).sum());
        t.put("memset_us", memoryOps == null ? null
                : memoryOps.stream().filter(e -> !NsysSummary.isMemcpy(e.name())).mapToDouble(NsysSummary.Entry::totalUs).sum());
        // nsys's trace when it was read; else the CUDA events' pipelined run (a different workload: see overlap_method)
        Overlap.Result o = overlap != null ? overlap : events != null ? events.pipelined().overlap() : null;
        t.put("kernel_busy_us", o == null ? null : o.kernelBusyUs());
        t.put("memcpy_busy_us", o == null ? null : o.memcpyBusyUs());
        t.put("overlap_us", o == null ? null : o.overlapUs());
        t.put("memcpy_compute_overlap_pct", o == null ? null : o.pct());
        t.put("overlap_method", overlap != null ? "nsys" : events != null ? "cuda-events" : null);
        t.put("ncu_launches_profiled", ncu == null ? null : ncu.stream().mapToInt(NcuSummary.Kernel::launches).sum());
        // complete only when ncu profiled every launch of its forwards (its --launch-count not reached)
        t.put("ncu_us_per_forward", ncu == null || meta.ncuForwards() <= 0 || ncu.stream().anyMatch(k -> k.meanDurationUs() == null) ? null
                : ncu.stream().mapToDouble(k -> k.meanDurationUs() * k.launches()).sum() / meta.ncuForwards());
        return t;
    }

    /** nsys's kernels in its order, each with ncu's figures for it; then kernels only ncu saw. */
    private List<Map<String, Object>> kernelRows() {
        List<Map<String, Object>> rows = new ArrayList<>();
        Map<String, NcuSummary.Kernel> byName = new LinkedHashMap<>();
        Map<String, List<NcuSummary.Kernel>> byBase = new HashMap<>();
        if (ncu != null) {
            for (NcuSummary.Kernel k : ncu) {
                byName.put(k.name(), k);
                byBase.computeIfAbsent(KernelNames.base(k.name()), b -> new ArrayList<>()).add(k);
            }
        }
        List<NcuSummary.Kernel> joined = new ArrayList<>();
        double all = kernels == null ? 0 : kernels.stream().mapToDouble(NsysSummary.Entry::totalUs).sum();
        if (kernels != null) {
            for (NsysSummary.Entry e : kernels) {
                String display = KernelNames.display(e.name());
                NcuSummary.Kernel k = byName.get(display);
                if (k == null) {
                    List<NcuSummary.Kernel> same = byBase.getOrDefault(KernelNames.base(display), List.of());
                    k = same.size() == 1 ? same.getFirst() : null;
                }
                if (k != null) {
                    joined.add(k);
                }
                Map<String, Object> r = entry("name", e, all > 0 ? 100 * e.totalUs() / all : null);
                r.put("ncu", k == null ? null : ncu(k));
                rows.add(r);
            }
        }
        if (ncu != null) {
            for (NcuSummary.Kernel k : ncu) {
                if (!joined.contains(k)) {
                    Map<String, Object> r = new LinkedHashMap<>();
                    r.put("name", k.name());
                    r.put("lantern", k.name().startsWith("lt_"));
                    r.put("calls", null);
                    r.put("total_us", null);
                    r.put("mean_us", null);
                    r.put("gpu_time_pct", null);
                    r.put("ncu", ncu(k));
                    rows.add(r);
                }
            }
        }
        return rows;
    }

    private Map<String, Object> entry(String key, NsysSummary.Entry e, Double pct) {
        Map<String, Object> r = new LinkedHashMap<>();
        String display = key.equals("name") ? KernelNames.display(e.name()) : e.name();
        r.put(key, display);
        if (key.equals("name")) {
            r.put("lantern", display.startsWith("lt_"));
        }
        r.put("calls", e.calls());
        r.put("total_us", e.totalUs());
        r.put("mean_us", e.meanUs());
        if (key.equals("name")) {
            r.put("gpu_time_pct", pct);
        }
        return r;
    }

    private static Map<String, Object> ncu(NcuSummary.Kernel k) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("launches", k.launches());
        m.put("duration_us", k.meanDurationUs());
        m.put("achieved_occupancy_pct", k.occupancyPct());
        m.put("l2_hit_pct", k.l2HitPct());
        m.put("dram_gbps", k.dramGbps());
        m.put("dram_pct_of_peak", k.dramPct());
        return m;
    }
}
