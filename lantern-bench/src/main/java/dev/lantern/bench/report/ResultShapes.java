package dev.lantern.bench.report;

import dev.lantern.weights.JsonValue;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The shapes results files come in, each turned into figures, kernel rows and a timeline. The
 * files were written by different tools over time (bench macro|micro|model's records, bench cpu's,
 * the matmul and GPT-2 CPU scripts, train runs, soaks, A/B comparisons, determinism runs), so each
 * shape is recognised by its keys; a file matching none is reported as unrecognised.
 */
final class ResultShapes {
    /** What one file holds. */
    record Parsed(String kind, List<Figure> figures, List<KernelRow> kernels, List<TimelinePoint> timeline) {}

    private ResultShapes() {}

    /** The file's content, or null when no known shape matches. */
    static Parsed parse(Map<String, JsonValue> root) {
        List<Figure> figs = new ArrayList<>();
        List<KernelRow> kernels = new ArrayList<>();
        List<TimelinePoint> timeline = new ArrayList<>();
        String kind = null;
        if (Json.arrayOf(root.get("rows"), "case", "new_ms")) {
            kind = "ab";
            String base = Json.str(root, "baseline_commit");
            for (JsonValue v : Json.arr(root.get("rows"))) {
                Map<String, JsonValue> r = Json.obj(v);
                String c = Json.str(r, "case");
                String impl = orElse(Json.str(r, "impl"), "lantern");
                add(figs, c, impl + " (new)", "ms", "ms", Json.num(r, "new_ms"), false);
                add(figs, c, impl + " (baseline " + orElse(base, "?") + ")", "ms", "ms", Json.num(r, "old_ms"), false);
            }
            records(root.get("torch_records"), null, figs, kernels);
        } else if (Json.arrayOf(root.get("results"), "case", "ms")) {
            kind = Json.arrayOf(root.get("results"), "tok_s") ? "models" : "bench";
            records(root.get("results"), null, figs, kernels);
        } else if (Json.arrayOf(root.get("records"), "case", "ms")) {
            kind = "bench cpu";
            records(root.get("records"), null, figs, kernels);
        } else if (Json.arrayOf(root.get("macro_default"), "case", "ms")) {
            kind = "determinism";
            records(root.get("macro_default"), null, figs, kernels);
            records(root.get("macro_deterministic"), " deterministic", figs, kernels);
        } else if (Json.arrayOf(root.get("summary"), "shape_MxKxN")) {
            kind = "matmul";
            String threads = Json.str(root, "threads");
            for (JsonValue v : Json.arr(root.get("summary"))) {
                Map<String, JsonValue> r = Json.obj(v);
                String c = "matmul " + Json.str(r, "shape_MxKxN") + (threads == null ? "" : " t" + threads);
                add(figs, c, "lantern", "GFLOP/s", "GFLOP/s", Json.num(Json.obj(r.get("lantern")), "gflops_median"), true);
                add(figs, c, "onnxruntime", "GFLOP/s", "GFLOP/s", Json.num(Json.obj(r.get("onnxruntime")), "gflops_median"), true);
            }
        } else if (Json.arrayOf(root.get("batches"), "lantern_ms")) {
            kind = "model cpu";
            String model = root.containsKey("benchmark") ? Json.str(root, "benchmark").split(" ")[0] : "model";
            String threads = Json.str(Json.obj(root.get("threads")), "lantern");
            for (JsonValue v : Json.arr(root.get("batches"))) {
                Map<String, JsonValue> r = Json.obj(v);
                String c = model + "_b" + Json.str(r, "batch") + "_s" + Json.str(r, "seq") + (threads == null ? "" : " t" + threads);
                add(figs, c, "lantern", "ms", "ms", Json.num(r, "lantern_ms"), false);
                add(figs, c, "onnxruntime", "ms", "ms", Json.num(r, "ort_ms"), false);
            }
        } else if (Json.arrayOf(root.get("runs"), "step_ms")) {
            kind = "train";
            for (JsonValue v : Json.arr(root.get("runs"))) {
                Map<String, JsonValue> r = Json.obj(v);
                String c = "train " + orElse(Json.str(r, "config"), "?") + " b" + orElse(Json.str(r, "batch"), "?")
                        + " amp " + orElse(Json.str(r, "amp"), "none") + (r.containsKey("threads") ? " t" + Json.str(r, "threads") : "");
                add(figs, c, "lantern", "step ms", "ms", Json.num(r, "step_ms"), false);
            }
        } else if (root.get("results") instanceof JsonValue.JsonObject soak && soak.members().containsKey("alloc_frag_pct_median")) {
            kind = "soak";
            Map<String, JsonValue> r = soak.members();
            String c = "soak " + orElse(Json.str(r, "device"), "?");
            add(figs, c, "fragmentation median", "%", "%", Json.num(r, "alloc_frag_pct_median"), false);
            add(figs, c, "fragmentation max", "%", "%", Json.num(r, "alloc_frag_pct_max"), false);
            add(figs, c, "waste median", "%", "%", Json.num(r, "waste_pct_median"), false);
            timeline(r.containsKey("timeline") ? r.get("timeline") : root.get("timeline"), timeline);
        }
        if (kind == null && Json.arrayOf(root.get("cases"), "case", "bit_identical")) {
            // scripts/gpu-determinism: one case a line of `lantern determinism --runs 5`; a case that
            // gave no verdict (timed out) has no figures
            kind = "determinism";
            for (JsonValue v : Json.arr(root.get("cases"))) {
                Map<String, JsonValue> r = Json.obj(v);
                String c = "determinism " + Json.str(r, "case");
                add(figs, c, "lantern", "max rel diff", "", Json.num(r, "max_rel_diff"), false);
                add(figs, c, "lantern", "seconds for the runs", "s", r.containsKey("bit_identical") ? Json.num(r, "seconds") : Double.NaN, false);
            }
        }
        if (kind == null && root.get("metrics_overhead") instanceof JsonValue.JsonObject o) {
            // lantern bench overhead: the step with the exporter off and on (scraped)
            kind = "metrics overhead";
            Map<String, JsonValue> r = o.members();
            String c = "metrics overhead " + orElse(Json.str(r, "case"), "?") + " " + orElse(Json.str(r, "device"), "?");
            add(figs, c, "exporter off", "step ms", "ms", Json.num(r, "off_ms"), false);
            add(figs, c, "exporter on, scraped", "step ms", "ms", Json.num(r, "on_ms"), false);
        }
        if (kind == null && root.get("profile") instanceof JsonValue.JsonString && root.get("totals") instanceof JsonValue.JsonObject) {
            // scripts/gpu-profile: nsys and ncu on one block's forwards, normalized (ProfileReport)
            kind = "profile";
            profile(root, figs, kernels);
        }
        if (kind == null && Json.arrayOf(root.get("timeline"), "t_s")) {
            kind = "soak";
            timeline(root.get("timeline"), timeline);
        }
        if (kind == null || (figs.isEmpty() && timeline.isEmpty())) {
            return null;
        }
        return new Parsed(kind, figs, kernels, timeline);
    }

    /** bench's records ({case, impl, ms, ..., steps|kernel_figures}); a CPU record's thread count joins its case. */
    private static void records(JsonValue list, String implSuffix, List<Figure> figs, List<KernelRow> kernels) {
        for (JsonValue v : Json.arr(list)) {
            Map<String, JsonValue> r = Json.obj(v);
            String c = Json.str(r, "case");
            if (c == null) {
                continue; // e.g. a leading {"torch": ..., "gpu": ...} header record
            }
            if (r.containsKey("threads")) {
                c = c + " t" + Json.str(r, "threads");
            }
            String impl = orElse(Json.str(r, "impl"), "lantern") + (implSuffix == null ? "" : implSuffix);
            add(figs, c, impl, "ms", "ms", Json.num(r, "ms"), false);
            if (Json.arrayOf(r.get("kernel_figures"), "name", "ms")) {
                for (JsonValue k : Json.arr(r.get("kernel_figures"))) {
                    Map<String, JsonValue> m = Json.obj(k);
                    kernels.add(new KernelRow(c, impl, Json.str(m, "name"), Json.num(m, "ms"), launchOccupancy(m), Json.num(m, "dram_gbps")));
                }
            } else {
                for (JsonValue s : Json.arr(r.get("steps"))) {
                    Map<String, JsonValue> m = Json.obj(s);
                    String op = m.containsKey("op") ? Json.str(m, "op") : Json.str(m, "kernel");
                    if (op != null) {
                        kernels.add(new KernelRow(c, impl, op, Json.num(m, "ms"), Double.NaN, Double.NaN));
                    }
                }
            }
        }
    }

    /**
     * A gpu-profile file: the kernel time per forward and the memcpy/compute overlap as figures,
     * and a kernel row per kernel with its time per forward and ncu's achieved occupancy and
     * DRAM GB/s (NaN where ncu did not run).
     */
    private static void profile(Map<String, JsonValue> root, List<Figure> figs, List<KernelRow> kernels) {
        String c = "profile " + orElse(Json.str(root, "block"), "?");
        Map<String, JsonValue> t = Json.obj(root.get("totals"));
        double us = Json.num(t, "kernel_us_per_forward");
        add(figs, c, "lantern (nsys)", "kernel ms per forward", "ms", us / 1000, false);
        add(figs, c, "lantern (nsys)", "memcpy/compute overlap", "%", Json.num(t, "memcpy_compute_overlap_pct"), true);
        // without nsys (not installed, timed out): ncu's durations, summed per forward it profiled
        add(figs, c, "lantern (ncu)", "kernel ms per forward", "ms", Double.isFinite(us) ? Double.NaN : Json.num(t, "ncu_us_per_forward") / 1000, false);
        double forwards = Json.num(root, "forwards");
        for (JsonValue v : Json.arr(root.get("kernels"))) {
            Map<String, JsonValue> k = Json.obj(v);
            Map<String, JsonValue> n = Json.obj(k.get("ncu"));
            double ms = forwards > 0 ? Json.num(k, "total_us") / forwards / 1000 : Json.num(n, "duration_us") / 1000;
            if (Json.str(k, "name") != null) {
                kernels.add(new KernelRow(c, "lantern (nsys, ncu)", Json.str(k, "name"), ms, Json.num(n, "achieved_occupancy_pct"),
                        Json.num(n, "dram_gbps")));
            }
        }
    }

    /** A kernel's occupancy: its launches' occupancy_pct weighted by their times (GEMMs have none). */
    private static double launchOccupancy(Map<String, JsonValue> kernel) {
        double w = 0;
        double sum = 0;
        for (JsonValue l : Json.arr(kernel.get("launches"))) {
            Map<String, JsonValue> m = Json.obj(l);
            double occ = Json.num(m, "occupancy_pct");
            double ms = Json.num(m, "ms");
            if (Double.isFinite(occ) && Double.isFinite(ms)) {
                sum += occ * ms;
                w += ms;
            }
        }
        return w > 0 ? sum / w : Double.NaN;
    }

    private static void timeline(JsonValue list, List<TimelinePoint> out) {
        for (JsonValue v : Json.arr(list)) {
            Map<String, JsonValue> m = Json.obj(v);
            double t = Json.num(m, "t_s");
            if (Double.isFinite(t)) {
                out.add(new TimelinePoint(t, Json.num(m, "reserved_bytes"), Json.num(m, "allocated_bytes"), Json.num(m, "frag_pct")));
            }
        }
    }

    private static void add(List<Figure> figs, String c, String impl, String metric, String unit, double v, boolean higher) {
        if (c != null && Double.isFinite(v)) {
            figs.add(new Figure(c, impl, metric, unit, v, higher));
        }
    }

    private static String orElse(String s, String dflt) {
        return s == null ? dflt : s;
    }
}
