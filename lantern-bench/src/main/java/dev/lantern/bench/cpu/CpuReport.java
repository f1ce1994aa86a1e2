package dev.lantern.bench.cpu;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import static dev.lantern.bench.cpu.CpuMachine.str;

/**
 * {@link CpuBench.Result}s as records (one JSON object each, the form of the GPU bench: {@code case},
 * {@code impl}, {@code ms}), as a step table for a terminal, and as the results file of
 * {@code bench/results/cpu/} (the records with the machine, JDK, vector width and threads).
 */
public final class CpuReport {
    private CpuReport() {}

    /** The records of one result: Lantern's (with its steps) and, with a peer, ONNX Runtime's. */
    public static List<String> records(CpuBench.Result r) {
        List<String> out = new ArrayList<>();
        StringBuilder steps = new StringBuilder("[");
        for (CpuBench.Step s : r.steps()) {
            steps.append(steps.length() > 1 ? ", " : "").append(String.format(Locale.ROOT,
                    "{\"kernel\": %s, \"kind\": %s, \"ops\": %s, \"ms\": %.4f, \"share\": %.4f, \"bytes\": %d, \"gbps\": %s}",
                    str(s.kernel()), str(s.kind()), str(s.ops()), s.ms(), s.share(), s.bytes(), gbps(s.gbps())));
        }
        steps.append(']');
        out.add(String.format(Locale.ROOT, "{\"case\": %s, \"impl\": \"lantern\", \"threads\": %d, \"ms\": %.4f, \"min_ms\": %.4f, "
                        + "\"cpu_ms\": %.4f, \"rounds\": %d, \"warmups\": %d, \"kernels\": %d, \"profiled_ms\": %.4f, \"outside_kernels_ms\": %.4f, \"output_copy_ms\": %.4f, \"dram_gbps\": %s, \"steps\": %s}",
                str(r.caseName()), r.threads(), r.lanternMs(), r.lanternMinMs(), r.lanternCpuMs(), r.rounds(), r.warmups(), r.steps().size(), r.profiledMs(),
                r.outsideMs(), r.outputCopyMs(), gbps(r.dramGbps()), steps));
        if (r.hasPeer()) {
            out.add(String.format(Locale.ROOT, "{\"case\": %s, \"impl\": \"onnxruntime\", \"version\": %s, \"threads\": %d, \"ms\": %.4f, "
                            + "\"min_ms\": %.4f, \"cpu_ms\": %.4f, \"optimization\": \"ALL_OPT\", \"lantern_speed_vs_ort\": %.4f, "
                            + "\"lantern_cpu_speed_vs_ort\": %.4f, \"rel_err\": %s, \"valid\": %b}",
                    str(r.caseName()), str(r.ortVersion()), r.threads(), r.ortMs(), r.ortMinMs(), r.ortCpuMs(), r.speedVsOrt(), r.ortCpuMs() / r.lanternCpuMs(),
                    Double.isNaN(r.relErr()) ? "null" : String.format(Locale.ROOT, "%.3e", r.relErr()), r.valid()));
        }
        if (r.torch() != null) {
            out.add(String.format(Locale.ROOT, "{\"case\": %s, \"impl\": \"pytorch-cpu\", \"version\": %s, \"threads\": %d, \"ms\": %.4f, "
                            + "\"min_ms\": %.4f, \"cpu_ms\": %.4f, \"mode\": \"eager, inference_mode\", \"lantern_speed_vs_torch\": %.4f, "
                            + "\"lantern_cpu_speed_vs_torch\": %.4f}",
                    str(r.caseName()), str(r.torch().version()), r.threads(), r.torch().ms(), r.torch().minMs(), r.torch().cpuMs(),
                    r.speedVsTorch(), r.torch().cpuMs() / r.lanternCpuMs()));
        }
        return out;
    }

    /** GB/s with one decimal, or JSON's null when there is no time to divide by. */
    private static String gbps(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.1f", v) : "null";
    }

    /** The human form: the figures, the step table in schedule order, the shares by kind and the five costliest kernels. */
    public static List<String> table(CpuBench.Result r) {
        List<String> lines = new ArrayList<>();
        lines.add(String.format(Locale.ROOT, "%s, %d thread%s: Lantern %.3f ms (min %.3f)", r.caseName(), r.threads(),
                r.threads() == 1 ? "" : "s", r.lanternMs(), r.lanternMinMs())
                + (r.hasPeer() ? String.format(Locale.ROOT, ", ONNX Runtime %s %.3f ms (min %.3f): Lantern at %.2fx ORT's speed%s",
                r.ortVersion(), r.ortMs(), r.ortMinMs(), r.speedVsOrt(), Double.isNaN(r.relErr()) ? ""
                        : String.format(Locale.ROOT, ", rel err %.1e%s", r.relErr(), r.valid() ? "" : " INVALID")) : "")
                // at one thread the caller's CPU time is the whole forward on both sides, and blind to other load
                + (r.threads() == 1 && r.hasPeer() ? String.format(Locale.ROOT, "; CPU time %.3f vs %.3f ms: %.2fx",
                r.lanternCpuMs(), r.ortCpuMs(), r.ortCpuMs() / r.lanternCpuMs()) : "")
                + (r.torch() != null ? String.format(Locale.ROOT, "; PyTorch %s %.3f ms (min %.3f): Lantern at %.2fx PyTorch's speed",
                r.torch().version(), r.torch().ms(), r.torch().minMs(), r.speedVsTorch()) : ""));
        int w = Math.max(6, r.steps().stream().mapToInt(s -> s.kernel().length()).max().orElse(6));
        String row = "  %-" + w + "s  %-11s %9s %7s  %s";
        lines.add(String.format(Locale.ROOT, row, "kernel", "kind", "ms", "share", "ops"));
        for (CpuBench.Step s : r.steps()) {
            lines.add(String.format(Locale.ROOT, row, s.kernel(), s.kind(), String.format(Locale.ROOT, "%.4f", s.ms()),
                    String.format(Locale.ROOT, "%.1f%%", 100 * s.share()), s.ops()));
        }
        lines.add(String.format(Locale.ROOT, row, "(outside kernels)", "", String.format(Locale.ROOT, "%.4f", r.outsideMs()),
                String.format(Locale.ROOT, "%.1f%%", r.profiledMs() > 0 ? 100 * r.outsideMs() / r.profiledMs() : 0),
                String.format(Locale.ROOT, "of which %.4f ms copying the outputs out; the rest views", r.outputCopyMs())));
        lines.add(String.format(Locale.ROOT, row, "(profiled forward)", "", String.format(Locale.ROOT, "%.4f", r.profiledMs()), "100%", ""));
        List<CpuBench.Step> top = r.steps().stream().sorted(Comparator.comparingDouble(CpuBench.Step::ms).reversed()).limit(5).toList();
        Map<String, Double> byKind = new TreeMap<>();
        r.steps().forEach(st -> byKind.merge(st.kind(), st.share(), Double::sum));
        lines.add("  by kind: " + String.join(", ", byKind.entrySet().stream().sorted(Map.Entry.<String, Double>comparingByValue().reversed())
                .map(e -> String.format(Locale.ROOT, "%s %.1f%%", e.getKey(), 100 * e.getValue())).toList()));
        lines.add("  top: " + String.join(", ", top.stream().map(s -> String.format(Locale.ROOT, "%s %.1f%%", s.kernel(), 100 * s.share())).toList()));
        return lines;
    }

    /** The results file's text: when and where it ran, then every record. */
    public static String file(List<CpuBench.Result> results, String commit, String loadStart, String loadEnd) {
        StringBuilder j = new StringBuilder("{\n");
        field(j, "date", str(LocalDate.now(ZoneOffset.UTC).toString()));
        field(j, "commit", str(commit));
        field(j, "benchmark", str("lantern bench cpu: Lantern compiled CPU forward, per-kernel steps, ONNX Runtime Java and PyTorch CPU (--torch) beside it"));
        field(j, "machine", "{\"cpu\": " + str(CpuMachine.cpuModel()) + ", \"cores\": " + CpuMachine.cores() + "}");
        field(j, "vector_bits", String.valueOf(CpuMachine.vectorBits()));
        field(j, "jdk", str(CpuMachine.jdk()));
        field(j, "threads", String.valueOf(results.isEmpty() ? 0 : results.getFirst().threads()));
        field(j, "timing", str("warmed alike, interleaved forward by forward, order swapped each round; medians of wall time; "
                + "steps from a separate profiled pass"));
        field(j, "loadavg_start", str(loadStart));
        field(j, "loadavg_end", str(loadEnd));
        List<String> recs = new ArrayList<>();
        results.forEach(r -> recs.addAll(records(r)));
        j.append("  \"records\": [\n    ").append(String.join(",\n    ", recs)).append("\n  ]\n}\n");
        return j.toString();
    }

    /**
     * The default results file: {@code bench/results/cpu/<date>-<commit>-bench-<case>-t<threads>.json}
     * under {@code root} (the thread count in the name: a 1-thread run does not replace the 2-thread one).
     */
    public static Path defaultFile(Path root, String commit, String caseName, int threads) {
        String safe = caseName.replaceAll("[^A-Za-z0-9._-]", "_");
        return root.resolve("bench/results/cpu").resolve(LocalDate.now(ZoneOffset.UTC) + "-" + commit + "-bench-" + safe + "-t" + threads + ".json");
    }

    public static void write(Path file, String text) {
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            Files.writeString(file, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    private static void field(StringBuilder j, String name, String json) {
        j.append("  ").append(str(name)).append(": ").append(json).append(",\n");
    }
}
