package dev.lantern.bench.cpu;

import dev.lantern.tensor.Tensor;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * ONNX Runtime's figure for the block {@code lantern demo} ran, so that a new user sees where
 * Lantern stands: timed now on an exported file ({@link #measure}), or else the newest ratio that
 * {@code lantern bench cpu} stored under {@code bench/results/cpu} for that case ({@link #stored}).
 */
public final class OrtBeside {
    private OrtBeside() {}

    /** ORT's median ms per forward on the block, and the version that ran it. */
    public record Measured(double ortMs, String version) {}

    /** A stored bench cpu record: both medians, the ratio (ORT's time over Lantern's), threads, the file. */
    /**
     * One stored (Lantern, ORT) pair: its medians, Lantern's speed as ORT's time over Lantern's, the
     * thread count, the file, and the vector width of the machine that measured it (0 when the file
     * does not say).
     */
    public record Stored(double lanternMs, double ortMs, double ratio, int threads, Path file, int vectorBits) {}

    /** ORT on {@code onnx} with Lantern's {@code inputs}, {@code threads} intra-op threads: the median of {@code runs} after {@code warmups}. */
    public static Measured measure(Path onnx, Map<String, Tensor> inputs, int threads, int warmups, int runs) {
        try (OrtPeer ort = new OrtPeer(onnx, threads, inputs)) {
            for (int i = 0; i < warmups; i++) {
                ort.run();
            }
            double[] t = new double[runs];
            for (int i = 0; i < runs; i++) {
                long t0 = System.nanoTime();
                ort.run();
                t[i] = (System.nanoTime() - t0) / 1e6;
            }
            return new Measured(CpuBench.median(t), ort.version());
        }
    }

    private static final Pattern CASE = Pattern.compile("\"case\": \"([^\"]*)\"");
    private static final Pattern THREADS = Pattern.compile("\"threads\": (\\d+)");
    private static final Pattern MS = Pattern.compile("\"ms\": ([0-9.eE+-]+)");
    private static final Pattern VECTOR_BITS = Pattern.compile("\"vector_bits\": (\\d+)");

    /** {@link #stored(List, String, int, int, List)} with no commit history: a day's runs by modification time. */
    public static Optional<Stored> stored(List<Path> roots, String caseName, int threads, int vectorBits) {
        return stored(roots, caseName, threads, vectorBits, List.of());
    }

    /**
     * The newest stored comparison for {@code caseName} under any of {@code roots}' {@code bench/results/cpu}.
     * Files are named {@code <date>-<commit>-bench-<case>[-t<threads>].json}: newest date first; a day's
     * runs by their commit's place in {@code commitsNewestFirst} (full or abbreviated hashes, the
     * checkout's history; a fresh clone gives every file the same modification time), then by
     * modification time, then by name. Preferred, in order: a run on a machine of {@code vectorBits}-bit
     * vectors at {@code threads}, then at any thread count, then another machine's at {@code threads},
     * then any: a ratio measured on another kind of CPU says little about this one.
     */
    public static Optional<Stored> stored(List<Path> roots, String caseName, int threads, int vectorBits, List<String> commitsNewestFirst) {
        List<Stored> all = new ArrayList<>();
        for (Path root : roots) {
            Path dir = root.resolve("bench/results/cpu");
            if (!Files.isDirectory(dir)) {
                continue;
            }
            List<Path> files;
            try (Stream<Path> s = Files.list(dir)) {
                Pattern name = Pattern.compile(".*-bench-" + Pattern.quote(caseName) + "(-t\\d+)?\\.json");
                files = s.filter(p -> name.matcher(p.getFileName().toString()).matches())
                        .sorted(Comparator.comparing((Path p) -> p.getFileName().toString().substring(0, Math.min(10, p.getFileName().toString().length())))
                                .reversed()
                                .thenComparing(p -> commitRank(p, commitsNewestFirst))
                                .thenComparing(Comparator.comparing(OrtBeside::modified).reversed())
                                .thenComparing(Comparator.comparing((Path p) -> p.getFileName().toString()).reversed()))
                        .toList();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            for (Path f : files) {
                all.addAll(read(f, caseName));
            }
        }
        List<java.util.function.Predicate<Stored>> tiers = List.of(
                s -> s.vectorBits() == vectorBits && s.threads() == threads,
                s -> s.vectorBits() == vectorBits,
                s -> s.threads() == threads,
                s -> true);
        for (var tier : tiers) {
            Optional<Stored> hit = all.stream().filter(tier).findFirst();
            if (hit.isPresent()) {
                return hit;
            }
        }
        return Optional.empty();
    }

    /** The place of a result file's commit ({@code <date>-<commit>-...}) in the history, newest 0; past the end when absent. */
    private static int commitRank(Path p, List<String> commitsNewestFirst) {
        String[] parts = p.getFileName().toString().split("-");
        if (parts.length < 4) {
            return Integer.MAX_VALUE;
        }
        String commit = parts[3];
        for (int i = 0; i < commitsNewestFirst.size(); i++) {
            String c = commitsNewestFirst.get(i);
            if (!commit.isEmpty() && (c.startsWith(commit) || commit.startsWith(c))) {
                return i;
            }
        }
        return Integer.MAX_VALUE;
    }

    /** A file's modification time in ms (0 when unreadable): several runs of one day differ only there. */
    private static long modified(Path p) {
        try {
            return Files.getLastModifiedTime(p).toMillis();
        } catch (IOException e) {
            return 0;
        }
    }

    /** The (Lantern, ORT) record pairs of one results file for {@code caseName}, one per thread count. */
    static List<Stored> read(Path file, String caseName) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (IOException e) {
            return List.of(); // an unreadable file is no figure, not an error of the demo
        }
        Matcher vb = VECTOR_BITS.matcher(String.join("\n", lines));
        int bits = vb.find() ? Integer.parseInt(vb.group(1)) : 0;
        Map<Integer, double[]> byThreads = new java.util.TreeMap<>();
        for (String line : lines) {
            Matcher c = CASE.matcher(line);
            Matcher t = THREADS.matcher(line);
            Matcher m = MS.matcher(line);
            if (!c.find() || !c.group(1).equals(caseName) || !t.find() || !m.find()) {
                continue;
            }
            boolean ort = line.contains("\"impl\": \"onnxruntime\"");
            if (!ort && !line.contains("\"impl\": \"lantern\"")) {
                continue; // another peer's record (pytorch-cpu with --torch) is neither side of the pair
            }
            double[] pair = byThreads.computeIfAbsent(Integer.parseInt(t.group(1)), x -> new double[] {Double.NaN, Double.NaN});
            pair[ort ? 1 : 0] = Double.parseDouble(m.group(1));
        }
        return byThreads.entrySet().stream().filter(e -> Arrays.stream(e.getValue()).noneMatch(Double::isNaN))
                .map(e -> new Stored(e.getValue()[0], e.getValue()[1], e.getValue()[1] / e.getValue()[0], e.getKey(), file, bits)).toList();
    }
}
