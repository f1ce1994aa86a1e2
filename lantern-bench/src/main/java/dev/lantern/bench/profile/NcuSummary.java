package dev.lantern.bench.profile;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code ncu --csv --page raw} (or {@code ncu --import R.ncu-rep --csv --page raw}): a header of
 * launch attributes and metric names, a row of units, then one row per profiled launch. The
 * {@code --page details} form (one row per metric: "Metric Name", "Metric Unit", "Metric Value")
 * is read too. A metric not collected (not asked for, not supported on the GPU, {@code n/a}) is
 * null, never 0. Launches are grouped by {@link KernelNames#display}.
 */
public final class NcuSummary {
    public static final String OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active";
    public static final String L2_HIT = "lts__t_sector_hit_rate.pct";
    public static final String DRAM_PCT = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
    public static final String DRAM_RATE = "dram__bytes.sum.per_second";
    public static final String DURATION = "gpu__time_duration.sum";

    /** One profiled launch; a figure is null when ncu did not report it. */
    public record Launch(String kernel, Double durationUs, Double occupancyPct, Double l2HitPct, Double dramPct, Double dramGbps) {}

    /**
     * One kernel's launches: the mean duration, and each rate or percentage averaged over the
     * launches weighted by their durations (so {@code dramGbps} is all their bytes over all
     * their time); null when no launch had the figure.
     */
    public record Kernel(String name, int launches, Double meanDurationUs, Double occupancyPct, Double l2HitPct,
            Double dramPct, Double dramGbps) {}

    private NcuSummary() {}

    public static List<Launch> launches(String source, String csv) {
        List<Csv.Row> rows = Csv.rows(source, csv);
        for (Csv.Row r : rows) {
            if (r.cells().contains("Metric Name") && r.cells().contains("Metric Value")) {
                return details(Csv.table(source, csv, h -> h.contains("Metric Name") && h.contains("Metric Value")));
            }
            if (r.cells().contains("Kernel Name")) {
                break;
            }
        }
        return raw(Csv.table(source, csv, h -> h.contains("Kernel Name")));
    }

    private static List<Launch> raw(Csv.Table t) {
        String src = t.source();
        int name = t.required("Kernel Name", "Kernel Name"::equals);
        int id = t.column("ID"::equals);
        List<Csv.Row> body = t.rows();
        List<String> units = null;
        // the units row: no launch ID and no kernel name
        if (!body.isEmpty() && (id < 0 ? body.getFirst().get(name).isEmpty() : body.getFirst().get(id).isEmpty())) {
            units = body.getFirst().cells();
            body = body.subList(1, body.size());
        }
        int[] cols = {t.column(DURATION::equals), t.column(OCCUPANCY::equals), t.column(L2_HIT::equals),
            t.column(DRAM_PCT::equals), t.column(DRAM_RATE::equals)};
        List<Launch> out = new ArrayList<>();
        for (Csv.Row r : body) {
            Double[] v = new Double[cols.length];
            for (int k = 0; k < cols.length; k++) {
                if (cols[k] >= 0) {
                    v[k] = scaled(k, Units.number(r.get(cols[k]), src, r.line(), t.header().get(cols[k])),
                            units == null ? null : units.get(cols[k]), src);
                }
            }
            out.add(new Launch(r.get(name), v[0], v[1], v[2], v[3], v[4]));
        }
        return out;
    }

    private static List<Launch> details(Csv.Table t) {
        String src = t.source();
        int name = t.required("Kernel Name", "Kernel Name"::equals);
        int id = t.required("ID", "ID"::equals);
        int metric = t.required("Metric Name", "Metric Name"::equals);
        int unit = t.required("Metric Unit", "Metric Unit"::equals);
        int value = t.required("Metric Value", "Metric Value"::equals);
        List<String> wanted = List.of(DURATION, OCCUPANCY, L2_HIT, DRAM_PCT, DRAM_RATE);
        Map<String, Double[]> byLaunch = new LinkedHashMap<>();
        Map<String, String> names = new HashMap<>();
        for (Csv.Row r : t.rows()) {
            String launch = r.get(id);
            names.putIfAbsent(launch, r.get(name));
            Double[] v = byLaunch.computeIfAbsent(launch, k -> new Double[wanted.size()]);
            int k = wanted.indexOf(r.get(metric));
            if (k >= 0) {
                v[k] = scaled(k, Units.number(r.get(value), src, r.line(), r.get(metric)), r.get(unit), src);
            }
        }
        List<Launch> out = new ArrayList<>();
        byLaunch.forEach((launch, v) -> out.add(new Launch(names.get(launch), v[0], v[1], v[2], v[3], v[4])));
        return out;
    }

    /** Durations to µs and the DRAM rate to GB/s; percentages as they are. */
    private static Double scaled(int k, Double v, String unit, String src) {
        if (v == null) {
            return null;
        }
        return switch (k) {
            case 0 -> v * Units.timeToMicros(unit == null || unit.isBlank() ? "ns" : unit, src);
            case 4 -> v * Units.rateToGbps(unit == null || unit.isBlank() ? "byte/second" : unit, src);
            default -> v;
        };
    }

    /** The launches grouped by kernel ({@link KernelNames#display}), in order of first launch. */
    public static List<Kernel> kernels(List<Launch> launches) {
        Map<String, List<Launch>> by = new LinkedHashMap<>();
        for (Launch l : launches) {
            by.computeIfAbsent(KernelNames.display(l.kernel()), k -> new ArrayList<>()).add(l);
        }
        List<Kernel> out = new ArrayList<>();
        by.forEach((name, ls) -> out.add(new Kernel(name, ls.size(), mean(ls), weighted(ls, Launch::occupancyPct),
                weighted(ls, Launch::l2HitPct), weighted(ls, Launch::dramPct), weighted(ls, Launch::dramGbps))));
        return out;
    }

    private static Double mean(List<Launch> ls) {
        double sum = 0;
        int n = 0;
        for (Launch l : ls) {
            if (l.durationUs() != null) {
                sum += l.durationUs();
                n++;
            }
        }
        return n == 0 ? null : sum / n;
    }

    /** Duration-weighted mean of a figure; a plain mean when no launch with it has a duration. */
    private static Double weighted(List<Launch> ls, java.util.function.Function<Launch, Double> f) {
        double sum = 0;
        double w = 0;
        double plain = 0;
        int n = 0;
        for (Launch l : ls) {
            Double v = f.apply(l);
            if (v == null) {
                continue;
            }
            plain += v;
            n++;
            if (l.durationUs() != null && l.durationUs() > 0) {
                sum += v * l.durationUs();
                w += l.durationUs();
            }
        }
        if (n == 0) {
            return null;
        }
        return w > 0 ? sum / w : plain / n;
    }
}
