package dev.lantern.cli;

import dev.lantern.Device;
import dev.lantern.DeviceUnavailableException;
import dev.lantern.Lantern;
import dev.lantern.Program;
import dev.lantern.RunMode;
import dev.lantern.Session;
import dev.lantern.SessionStats;
import dev.lantern.Weights;
import dev.lantern.engine.CompileOptions;
import dev.lantern.ir.Graph;
import dev.lantern.ir.LanternException;
import dev.lantern.metrics.LanternMetrics;
import dev.lantern.tensor.Npy;
import dev.lantern.tensor.Tensor;
import dev.lantern.trace.Span;
import dev.lantern.trace.Tracing;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code lantern run FILE.ir}: any graph in the IR text format, on any device, through the public
 * API only ({@link Lantern#compile}, {@link Program#load}, {@link Session#run}). Parameters come
 * from {@code --weights} or {@link Weights#random} under {@code --seed N}; inputs not given with
 * {@code --input NAME=FILE.npy} from {@link Program#randomInputs} under seed N+1. Prints each
 * output's shape, dtype and checksum ({@link OutputSummary}) and the median time of
 * {@code --runs} forwards after one warm-up; {@code --out DIR} writes {@code DIR/<output>.npy}.
 */
final class RunCommand {
    static final String USAGE = "run FILE.ir [--device auto|cpu|cuda|cuda:N] [--weights W.safetensors|DIR] "
            + "[--input NAME=FILE.npy ...] [--amp none|bf16|f16] [--mode eager|compiled|graph] [--seed N] [--runs N] "
            + "[--out DIR] [--deterministic] " + MetricsOption.USAGE + " " + TraceOption.USAGE + " [--json]  |  run " + OnnxRunCommand.USAGE
            + "  |  run OUT.lpk [--device cpu|cuda] [--public-key KEY.pub] [run options] (a package, verified first)"
            + "  |  run MODEL_DIR [--tokens 1,2,3 | --batch B --seq S | --input input_ids=FILE.npy] (config.json + safetensors)";

    /** Forwards before the timed ones: at least this many, and more for up to {@link #WARMUP_NANOS} (at most 1000). */
    static final int WARMUP = 10;
    static final long WARMUP_NANOS = 1_000_000_000L;

    private RunCommand() {}

    static int run(List<String> argv, PrintStream out, PrintStream err) {
        // --input and --shape repeat, so they are taken out before Args, which keeps one value per option
        RepeatedOptions repeated = RepeatedOptions.take("run", argv, Set.of("input", "shape"));
        Set<String> valued = new java.util.HashSet<>(Set.of("device", "weights", "amp", "mode", "seed", "runs", "out",
                "metrics-port", "metrics-host", "trace", "public-key"));
        valued.addAll(OnnxRunCommand.OPTIONS);
        Args a = Args.parse("run", repeated.rest(), Set.of("json", "deterministic"), valued);
        if (a.positional().size() != 1) {
            throw new UsageException("run: expected one FILE.ir" + (a.positional().isEmpty() ? "" : ", found "
                    + a.positional().size() + " arguments") + " (usage: lantern " + USAGE + ")");
        }
        if (PackageRunner.isPackage(a.positional().getFirst())) {
            return PackageRunner.run(argv, a, out, err);
        }
        if (a.get("public-key", null) != null) {
            throw new UsageException("run: --public-key checks a package (OUT.lpk)");
        }
        MetricsOption.Spec metricsSpec = MetricsOption.parse("run", a.get("metrics-port", null), a.get("metrics-host", null));
        Path traceFile = TraceOption.parse("run", a.get("trace", null));
        try (TraceOption.Traced trace = TraceOption.start("run", traceFile, err);
             MetricsOption.Served served = MetricsOption.start("run", metricsSpec, err)) {
            return run(a, repeated, served.metrics, out);
        }
    }

    private static int run(Args a, RepeatedOptions repeated, LanternMetrics metrics, PrintStream out) {
        if (HfRunCommand.isModelFolder(a.positional().getFirst())) {
            return HfRunCommand.run(a, repeated, metrics, out);
        }
        if (ModelFormat.isOnnx(a.positional().getFirst())) {
            return OnnxRunCommand.run(a, repeated, metrics, out);
        }
        OnnxRunCommand.refuseOnnxOptions("run", a, repeated);
        List<String> inputSpecs = repeated.get("input");
        String file = a.positional().getFirst();
        String deviceText = a.get("device", "auto");
        Device device = deviceText.equals("auto") ? Lantern.bestDevice()
                : UsageException.option("run", () -> Device.parse(deviceText));
        CompileOptions.Amp amp = UsageException.option("run", () -> CompileOptions.Amp.parse(a.get("amp", "none")));
        RunMode mode = UsageException.option("run", () -> RunMode.parse(a.get("mode", "compiled")));
        long seed = a.getLong("run", "seed", 0);
        int runs = a.getInt("run", "runs", 10, 1, 1_000_000);
        Map<String, Path> inputFiles = inputSpecs(inputSpecs);
        try {
            Lantern.backend(device);
        } catch (DeviceUnavailableException e) {
            // exit 2, as demo --device cuda: the command line asks for a device that is not there
            throw new UsageException("run: --device " + deviceText + ": " + e.getMessage());
        }

        Graph g = GraphFile.read(file);
        Program program = Lantern.compile(g, CompileOptions.defaults().withAmp(amp).withTarget(device.target())
                .withDeterministic(a.flag("deterministic")));
        for (String name : inputFiles.keySet()) {
            if (!program.inputNames().contains(name)) {
                throw new UsageException("run: --input " + name + "=...: " + file + " has no input named '" + name
                        + "' (its inputs: " + String.join(", ", program.inputNames()) + ")");
            }
        }
        Map<String, Tensor> inputs = program.randomInputs(seed + 1);
        for (Map.Entry<String, Path> e : inputFiles.entrySet()) {
            inputs.put(e.getKey(), checkedInput(g, e.getKey(), e.getValue()));
        }
        if (a.get("weights", null) != null && !Files.exists(Path.of(a.get("weights", null)))) {
            throw new LanternException("--weights " + a.get("weights", null) + ": no such file or folder");
        }
        Path outDir = a.get("out", null) == null ? null : outDir(Path.of(a.get("out", null)));

        Timed timing;
        try (Weights w = a.get("weights", null) == null ? Weights.random(seed) : Weights.safetensors(Path.of(a.get("weights", null)))) {
            timing = timed(program, device, w, mode, inputs, runs, metrics);
        }
        Map<String, Tensor> outputs = timing.outputs();
        int warmups = timing.warmups();
        double median = timing.medianMs();
        SessionStats stats = timing.stats();
        List<OutputSummary> summaries = new ArrayList<>();
        outputs.forEach((name, t) -> summaries.add(OutputSummary.of(name, t)));
        if (outDir != null) {
            for (Map.Entry<String, Tensor> e : outputs.entrySet()) {
                OutputFile.writeAtomically(outDir.resolve(fileName(e.getKey()) + ".npy"), Npy.toBytes(e.getValue()));
            }
        }
        if (a.flag("json")) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("file", file);
            r.put("device", device.toString());
            r.put("mode", mode.name().toLowerCase(java.util.Locale.ROOT));
            r.put("amp", amp.name().toLowerCase(java.util.Locale.ROOT));
            r.put("deterministic", a.flag("deterministic"));
            r.put("seed", seed);
            r.put("weights", a.get("weights", "random"));
            r.put("inputs_from_files", List.copyOf(inputFiles.keySet()));
            r.put("runs", runs);
            r.put("warmup_runs", warmups);
            r.put("ms", DemoCommand.round(median, 4));
            r.put("graph_replays", stats.graphReplays());
            r.put("graph_fallbacks", new LinkedHashMap<>(stats.graphFallbacks()));
            r.put("outputs", summaries.stream().map(OutputSummary::json).toList());
            if (outDir != null) {
                r.put("out", outDir.toString());
            }
            out.println(Json.write(r));
        } else {
            out.printf("graph     %s (%d inputs, %d params, %d outputs)%n", file, g.inputs().size(), g.params().size(),
                    outputs.size());
            out.printf("device    %s, mode %s, amp %s, seed %d (weights %s)%n", device, mode.name().toLowerCase(java.util.Locale.ROOT),
                    amp.name().toLowerCase(java.util.Locale.ROOT), seed, a.get("weights", "random"));
            out.printf(java.util.Locale.ROOT, "ms        %.4f median of %d forwards after %d warm-up forwards%s%n", median, runs, warmups,
                    mode == RunMode.GRAPH ? String.format(" (graph replays %d of %d)", stats.graphReplays(), stats.forwards()) : "");
            int width = summaries.stream().mapToInt(x -> x.name().length()).max().orElse(1);
            for (OutputSummary o : summaries) {
                out.println("output    " + o.line(width));
            }
            if (outDir != null) {
                out.println("wrote     " + outputs.size() + " .npy file(s) to " + outDir);
            }
        }
        return 0;
    }

    /** What {@link #timed} measured: the last forward's outputs, the warm-up count, the median and the session's stats. */
    record Timed(Map<String, Tensor> outputs, int warmups, double medianMs, SessionStats stats) {}

    /**
     * Loads {@code program} on {@code device} and times {@code runs} forwards after the warm-up (at least
     * {@link #WARMUP} forwards, more for up to {@link #WARMUP_NANOS}, at most 1000), recording each timed forward's
     * time as a step and the session's graph figures after every forward in {@code metrics}.
     */
    static Timed timed(Program program, Device device, Weights w, RunMode mode, Map<String, Tensor> inputs, int runs,
            LanternMetrics metrics) {
        Map<String, Tensor> outputs = null;
        int warmups = 0;
        double[] ms = new double[runs];
        try (Session s = program.load(device, w, mode)) {
            // warm-up: the first forward loads kernels or captures a graph; the rest let the JIT compile the CPU loops
            long warmStart = System.nanoTime();
            for (int i = 0; i < WARMUP || (System.nanoTime() - warmStart < WARMUP_NANOS && i < 1000); i++) {
                try (Span span = Tracing.span("warm-up forward", "step")) {
                    outputs = s.run(inputs);
                }
                warmups = i + 1;
                metrics.session(s.stats());
            }
            for (int i = 0; i < runs; i++) {
                long t0 = System.nanoTime();
                try (Span span = Tracing.span("forward", "step")) {
                    outputs = s.run(inputs);
                }
                ms[i] = (System.nanoTime() - t0) / 1e6;
                metrics.session(s.stats());
                metrics.recordStep(ms[i], 0); // a forward of a graph: no tokens to count
            }
            return new Timed(outputs, warmups, median(ms), s.stats());
        }
    }

    /** {@code NAME=FILE.npy} by name, each name once. */
    private static Map<String, Path> inputSpecs(List<String> specs) {
        Map<String, Path> m = new LinkedHashMap<>();
        for (String s : specs) {
            int eq = s.indexOf('=');
            if (eq <= 0 || eq == s.length() - 1) {
                throw new UsageException("run: --input takes NAME=FILE.npy, found '" + s + "'");
            }
            if (m.put(s.substring(0, eq), Path.of(s.substring(eq + 1))) != null) {
                throw new UsageException("run: --input " + s.substring(0, eq) + " is given twice");
            }
        }
        return m;
    }

    /** The .npy file's tensor when it has the input's declared shape; its dtype converts in the session. */
    private static Tensor checkedInput(Graph g, String name, Path file) {
        Tensor t = Npy.read(file);
        var declared = g.inputs().stream().filter(n -> dev.lantern.Bindings.name(n).equals(name)).findFirst().orElseThrow().type();
        if (!t.shape().equals(declared.shape())) {
            throw new LanternException("--input " + name + "=" + file + ": the graph declares " + declared.dtype()
                    + OutputSummary.shapeText(declared.shape().dims()) + ", the file holds "
                    + t.dtype() + OutputSummary.shapeText(t.shape().dims()));
        }
        if (!t.dtype().isFloating() && declared.dtype().isFloating() || t.dtype().isFloating() && !declared.dtype().isFloating()) {
            throw new LanternException("--input " + name + "=" + file + ": the graph declares " + declared.dtype()
                    + ", the file holds " + t.dtype() + " (floats and integers do not convert)");
        }
        return t;
    }

    /** {@code --out DIR}: created with its parents when missing; anything that is not a folder is refused. */
    static Path outDir(Path dir) {
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            throw new LanternException("--out " + dir + ": not a folder");
        }
        try {
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new LanternException("--out " + dir + ": cannot create the folder: " + TextFiles.reason(e), e);
        }
    }

    /** An output's value name as a file name: IR names are identifiers, but nothing may leave the folder. */
    private static String fileName(String value) {
        if (!value.matches("[A-Za-z0-9_.\\-]+") || value.startsWith(".")) {
            throw new LanternException("output '" + value + "' cannot be a file name; rename the value in the IR");
        }
        return value;
    }

    private static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }
}
