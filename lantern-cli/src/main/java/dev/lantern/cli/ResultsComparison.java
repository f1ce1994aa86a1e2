package dev.lantern.cli;

import dev.lantern.ir.LanternException;
import dev.lantern.weights.JsonParser;
import dev.lantern.weights.JsonValue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The performance gate's regression check: every figure of a results file against the same figure
 * of a stored earlier one; a figure more than {@code maxWorse} (0.10: 10 %) worse fails.
 *
 * <p>A results file is a JSON object with its records in {@code "results"} (the GPU bench's
 * files) or {@code "records"} (the CPU bench's and the gate's), each record {@code case},
 * {@code impl}, {@code ms} and optionally {@code threads}. The figures: each Lantern record's
 * {@code ms} (lower is better; a peer's own time is not compared), named {@code case/impl[/tN] ms};
 * and the ratios measured within one run,
 * which machine noise and a different machine largely cancel (higher is better): Lantern's
 * eager over compiled time for a case with both records ({@code case eager/compiled}), PyTorch's
 * best time over Lantern's best (compiled or graph-replayed) for a case with both
 * ({@code case vs torch}, the GPU files), and a record's {@code lantern_speed_vs_ort}. With {@code ratiosOnly} (files from different machines,
 * as the CI run against the stored baseline) the times are left out. Figures in only one file
 * are not compared; no figure in common is an error, not a pass.
 */
final class ResultsComparison {
    /** The PyTorch forms of the GPU bench's records (scripts/bench-summary's columns). */
    static final Set<String> TORCH = Set.of("eager", "torch", "torch-sdpa", "compile", "torch-compile", "compile-cudagraphs");

    /** One compared figure: old and new value, and the relative change for the worse (negative: better). */
    record Figure(String name, double previous, double current, boolean higherIsBetter) {
        double worse() {
            return higherIsBetter ? (previous - current) / previous : (current - previous) / previous;
        }

        String line() {
            return String.format(Locale.ROOT, "%s %.4g -> %.4g (%+.1f%%)", name, previous, current,
                    100 * (current / previous - 1));
        }
    }

    /**
     * The figures compared, the worst first, and the verdict. {@code accepted}: the names of figures
     * whose regression a person has looked at and accepted for this pair of files (with a reason, in
     * the file {@link #accepted} reads); they are reported, and do not fail.
     */
    record Outcome(List<Figure> figures, double maxWorse, Set<String> accepted) {
        boolean pass() {
            return failures().isEmpty();
        }

        Figure worst() {
            return figures.getFirst();
        }

        /** Figures over the limit and not accepted. */
        List<Figure> failures() {
            return figures.stream().filter(f -> f.worse() > maxWorse && !accepted.contains(f.name())).toList();
        }

        /** Figures over the limit that were accepted. */
        List<Figure> waived() {
            return figures.stream().filter(f -> f.worse() > maxWorse && accepted.contains(f.name())).toList();
        }

        Outcome accepting(Set<String> names) {
            return new Outcome(figures, maxWorse, Set.copyOf(names));
        }
    }

    /**
     * The figures accepted for the pair (current, previous) in a tab-separated file of lines
     * {@code NEW-FILE-NAME  OLD-FILE-NAME  FIGURE  REASON} ({@code #} starts a comment). A line without
     * a reason is an error: an accepted regression says why.
     */
    static Set<String> accepted(Path file, Path current, Path previous) {
        Set<String> out = new java.util.HashSet<>();
        for (String[] f : acceptanceLines(file, 4, "NEW<TAB>OLD<TAB>FIGURE<TAB>REASON")) {
            if (f[0].equals(current.getFileName().toString()) && f[1].equals(previous.getFileName().toString())) {
                out.add(f[2]);
            }
        }
        return out;
    }

    /**
     * The lines of a tab-separated acceptance file ({@code #} starts a comment, blank lines skipped),
     * each split into its fields; a line with fewer than {@code fields} or an empty last one (the
     * reason) is an error naming the file and line: an acceptance says why.
     */
    static List<String[]> acceptanceLines(Path file, int fields, String form) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (IOException e) {
            throw new LanternException("compare: cannot read " + file + ": " + TextFiles.reason(e), e);
        }
        List<String[]> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\t");
            if (f.length < fields || f[fields - 1].isBlank()) {
                throw new LanternException(file + ":" + (i + 1) + ": expected " + form);
            }
            out.add(f);
        }
        return out;
    }

    private ResultsComparison() {}

    static Outcome compare(Path current, Path previous, double maxWorse, boolean ratiosOnly) {
        Map<String, Figure> prev = figures(read(previous), ratiosOnly);
        List<Figure> out = new ArrayList<>();
        for (Figure f : figures(read(current), ratiosOnly).values()) {
            Figure p = prev.get(f.name());
            if (p != null) {
                out.add(new Figure(f.name(), p.current(), f.current(), f.higherIsBetter()));
            }
        }
        if (out.isEmpty()) {
            throw new LanternException("compare: " + current + " and " + previous + " have no figure in common"
                    + (ratiosOnly ? " (ratios only: eager/compiled or speed vs ORT)" : ""));
        }
        out.sort((a, b) -> Double.compare(b.worse(), a.worse()));
        return new Outcome(List.copyOf(out), maxWorse, Set.of());
    }

    /** A file's figures by name, each with its value as {@code current}. */
    static Map<String, Figure> figures(JsonValue.JsonObject doc, boolean ratiosOnly) {
        JsonValue list = doc.members().containsKey("results") ? doc.members().get("results") : doc.members().get("records");
        if (!(list instanceof JsonValue.JsonArray arr)) {
            throw new LanternException("compare: not a results file (no \"results\" or \"records\" list)");
        }
        Map<String, Figure> out = new LinkedHashMap<>();
        Map<String, Double> lantern = new LinkedHashMap<>();
        Map<String, Double> eager = new LinkedHashMap<>();
        Map<String, Double> best = new LinkedHashMap<>();  // Lantern's best of compiled and graph-replayed
        Map<String, Double> torch = new LinkedHashMap<>(); // PyTorch's best of its forms, timed in the same call
        for (JsonValue v : arr.elements()) {
            if (!(v instanceof JsonValue.JsonObject rec) || !(rec.members().get("case") instanceof JsonValue.JsonString c)
                    || !(rec.members().get("impl") instanceof JsonValue.JsonString impl)) {
                continue; // a record of another kind (a summary, a note)
            }
            String key = c.value() + "/" + impl.value() + (rec.members().get("threads") instanceof JsonValue.JsonNumber t ? "/t" + t.literal() : "");
            double ms = number(rec.members().get("ms"));
            if (!Double.isNaN(ms) && ms > 0) {
                if (!ratiosOnly && impl.value().startsWith("lantern")) { // a peer's own time is not Lantern's figure
                    out.put(key + " ms", new Figure(key + " ms", ms, ms, false));
                }
                String caseKey = key.replace("/" + impl.value(), "");
                switch (impl.value()) {
                    case "lantern" -> {
                        lantern.put(caseKey, ms);
                        best.merge(caseKey, ms, Math::min);
                    }
                    case "lantern-graph" -> best.merge(caseKey, ms, Math::min);
                    case "lantern-eager" -> eager.put(caseKey, ms);
                    default -> {
                        if (TORCH.contains(impl.value())) {
                            torch.merge(caseKey, ms, Math::min);
                        }
                    }
                }
            }
            double vsOrt = number(rec.members().get("lantern_speed_vs_ort"));
            if (!Double.isNaN(vsOrt) && vsOrt > 0) {
                out.put(key + " speed vs ort", new Figure(key + " speed vs ort", vsOrt, vsOrt, true));
            }
        }
        lantern.forEach((k, ms) -> {
            Double e = eager.get(k);
            if (e != null) {
                out.put(k + " eager/compiled", new Figure(k + " eager/compiled", e / ms, e / ms, true));
            }
        });
        best.forEach((k, ms) -> {
            Double t = torch.get(k);
            if (t != null) {
                out.put(k + " vs torch", new Figure(k + " vs torch", t / ms, t / ms, true));
            }
        });
        return out;
    }

    static JsonValue.JsonObject read(Path file) {
        try {
            if (JsonParser.parse(Files.readAllBytes(file), 32) instanceof JsonValue.JsonObject o) {
                return o;
            }
            throw new LanternException("compare: " + file + " is not a JSON object");
        } catch (IOException e) {
            throw new LanternException("compare: cannot read " + file + ": " + TextFiles.reason(e), e);
        } catch (LanternException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new LanternException("compare: " + file + " is not JSON: " + e.getMessage(), e);
        }
    }

    private static double number(JsonValue v) {
        if (v instanceof JsonValue.JsonNumber n) {
            try {
                return Double.parseDouble(n.literal());
            } catch (NumberFormatException e) {
                return Double.NaN;
            }
        }
        return Double.NaN;
    }
}
