package dev.lantern.cli;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.ir.LanternException;
import dev.lantern.tensor.Npy;
import dev.lantern.tensor.Tensor;
import dev.lantern.weights.JsonParser;
import dev.lantern.weights.JsonValue;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * {@code lantern determinism}: the determinism gate. Runs the same forward in {@code --runs}
 * separate JVMs ({@link DeterminismRun}, with this JVM's class path and options; {@code --threads}
 * gives each run its CPU thread count in turn), and compares every run with the first: graph
 * hash, cache key, kernel cache keys, autotune choices and outputs. With {@code --deterministic}
 * the outputs must be bit-identical; without, within the plan's tolerance (relative
 * ‖run − run 0‖ / ‖run 0‖ ≤ 1e-6 in f32, 1e-3 under bf16/f16 AMP). Prints where the runs first
 * differ. Exit 0 when the gate passes, 1 when it does not, 2 for a bad command line.
 * {@code --train N} compares training runs instead: N steps of {@code lantern train}'s loop on the block
 * (the losses and the final weights are the run's outputs; their hashes are reported per run).
 */
final class DeterminismCommand {
    static final String USAGE = "determinism [--runs N] (--config NAME | --shape B,S,H,N,M[,encoder] | --model FILE.ir|DIR) "
            + "[--device cpu|cuda] [--amp none|bf16|f16] [--deterministic] [--seed N] [--threads T1,T2,...] [--batch B --seq S] "
            + "[--train N] [--json]";
    static final double F32_TOLERANCE = 1e-6;
    static final double LOW_TOLERANCE = 1e-3;

    private DeterminismCommand() {}

    static int run(List<String> argv, PrintStream out, PrintStream err) {
        Args a = Args.parse("determinism", argv, Set.of("json", "deterministic"),
                Set.of("runs", "config", "shape", "model", "device", "amp", "seed", "threads", "batch", "seq", "train")).noPositional("determinism");
        if (a.get("train", null) != null) {
            a.getInt("determinism", "train", 1, 1, 1_000_000);
            if (a.get("model", null) != null) {
                throw new UsageException("determinism: --train N trains a block (--config or --shape); --model is compared by its forward");
            }
        }
        int runs = a.getInt("determinism", "runs", 5, 2, 1000);
        String device = a.get("device", "cpu");
        if (!device.equals("cpu") && !device.equals("cuda")) {
            throw new UsageException("determinism: --device takes cpu or cuda, found '" + device + "'");
        }
        if (device.equals("cuda") && CudaDevice.count() < 1) {
            throw new UsageException("determinism: --device cuda: no CUDA device (driver or GPU not found)");
        }
        String amp = a.get("amp", "none");
        UsageException.option("determinism", () -> dev.lantern.engine.CompileOptions.Amp.parse(amp));
        int given = (a.get("config", null) != null ? 1 : 0) + (a.get("shape", null) != null ? 1 : 0) + (a.get("model", null) != null ? 1 : 0);
        if (given > 1) {
            throw new UsageException("determinism: give one of --config, --shape and --model");
        }
        BlockOption.of("determinism", a.get("config", null), a.get("shape", null)); // a bad name fails here, not in each run
        if (a.get("model", null) != null && !Files.exists(Path.of(a.get("model", null)))) {
            throw new UsageException("determinism: --model " + a.get("model", null) + ": no such file or folder");
        }
        if (a.get("model", null) != null && ModelFormat.isOnnx(a.get("model", null))) {
            throw new UsageException("determinism: --model takes an .ir file or a Hugging Face model folder; ONNX files are not supported here yet");
        }
        a.getInt("determinism", "batch", 1, 1, 1 << 16); // checked here, so that a bad value is a usage error, not a failed run
        a.getInt("determinism", "seq", 8, 1, 1 << 20);
        a.getLong("determinism", "seed", 0);
        List<Integer> threads = threads(a.get("threads", null));
        boolean strict = a.flag("deterministic");

        Path tmp;
        try {
            tmp = Files.createTempDirectory("lantern-determinism");
        } catch (IOException e) {
            throw new LanternException("determinism: cannot create a temporary folder: " + TextFiles.reason(e), e);
        }
        try {
            List<Map<String, Object>> records = new ArrayList<>();
            List<List<Tensor>> outputs = new ArrayList<>();
            for (int i = 0; i < runs; i++) {
                Integer t = threads.isEmpty() ? null : threads.get(i % threads.size());
                Map<String, Object> r = child(i, t, a, tmp);
                records.add(r);
                List<Tensor> outs = new ArrayList<>();
                for (Object o : (List<?>) r.get("outputs")) {
                    outs.add(Npy.read(Path.of(String.valueOf(((Map<?, ?>) o).get("file")))));
                }
                outputs.add(outs);
            }
            return report(records, outputs, strict, device, amp, a.flag("json"), out, err);
        } finally {
            deleteQuietly(tmp);
        }
    }

    static int report(List<Map<String, Object>> records, List<List<Tensor>> outputs, boolean strict, String device, String amp,
                              boolean json, PrintStream out, PrintStream err) {
        RunDifference first = null;
        RunDifference structuralDiff = null; // the first run compiled, keyed or tuned unlike run 0 (outputs aside)
        double maxRel = 0;
        for (int i = 1; i < records.size(); i++) {
            RunDifference d = RunDifference.of(i, records.getFirst(), records.get(i), outputs.getFirst(), outputs.get(i));
            if (first == null) {
                first = d;
            }
            if (structuralDiff == null && d != null && !d.field().equals("output")) {
                structuralDiff = d;
            }
            for (int o = 0; o < outputs.getFirst().size(); o++) {
                maxRel = Math.max(maxRel, relDiff(outputs.getFirst().get(o), outputs.get(i).get(o)));
            }
        }
        boolean bitIdentical = first == null;
        double tolerance = amp.equals("none") || amp.equals("f32") || amp.equals("off") ? F32_TOLERANCE : LOW_TOLERANCE;
        boolean structural = structuralDiff == null;
        boolean pass = strict ? bitIdentical : structural && maxRel <= tolerance;
        List<String> outputHashes = records.stream().map(DeterminismCommand::outputHash).toList();

        Map<String, Object> r = new LinkedHashMap<>();
        r.put("runs", records.size());
        r.put("device", device);
        r.put("deterministic", strict);
        r.put("pass", pass);
        r.put("bit_identical", bitIdentical);
        r.put("max_rel_diff", maxRel);
        r.put("tolerance", strict ? 0.0 : tolerance);
        r.put("graph_hash", records.getFirst().get("graph_hash"));
        r.put("cache_key", records.getFirst().get("cache_key"));
        r.put("kernel_keys", records.getFirst().get("kernel_keys"));
        r.put("autotune", records.getFirst().get("autotune"));
        r.put("threads", records.stream().map(x -> x.get("threads")).toList());
        r.put("output_hashes", outputHashes);
        if (records.getFirst().containsKey("weights_hash")) {
            r.put("train_steps", records.getFirst().get("train_steps"));
            r.put("weights_hashes", records.stream().map(x -> x.get("weights_hash")).toList());
            r.put("loss_hashes", records.stream().map(x -> x.get("loss_hash")).toList());
        }
        r.put("first_difference", first == null ? null : first.json());
        if (json) {
            out.println(Json.write(r));
        } else {
            out.printf("determinism  %d runs on %s, %s, threads %s%n", records.size(), device,
                    strict ? "strict mode (bit-identical required)" : String.format(java.util.Locale.ROOT, "tolerance %.0e", tolerance), r.get("threads"));
            out.printf("graph hash   %s%n", r.get("graph_hash"));
            out.printf("kernels      %d cache keys%n", ((List<?>) r.get("kernel_keys")).size());
            out.printf("autotune     %d choices%n", ((Map<?, ?>) r.get("autotune")).size());
            for (int i = 0; i < outputHashes.size(); i++) {
                out.printf("run %-3d      output sha256 %s%n", i, outputHashes.get(i));
            }
            out.printf(java.util.Locale.ROOT, "result       %s (max relative difference %.3e)%n",
                    bitIdentical ? "bit-identical" : first.line(), maxRel);
        }
        if (!pass) {
            err.println("lantern determinism: " + (strict ? "runs are not bit-identical in strict mode: " + first.line()
                    : !structural ? "runs compiled differently: " + structuralDiff.line()
                    : String.format(java.util.Locale.ROOT, "runs differ by %.3e, over the tolerance %.0e", maxRel, tolerance)));
            return ExitStatus.BAD_INPUT;
        }
        return ExitStatus.OK;
    }

    /** One run in a JVM of its own; its one JSON line as maps, lists and strings. */
    private static Map<String, Object> child(int index, Integer threads, Args a, Path tmp) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            // this JVM's options (the vector module, native access, heap) minus debuggers, agents and the thread count
            if (!arg.startsWith("-agentlib") && !arg.startsWith("-javaagent") && !arg.startsWith("-Dlantern.cpu.threads=")) {
                cmd.add(arg);
            }
        }
        if (threads != null) {
            cmd.add("-Dlantern.cpu.threads=" + threads);
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName(), "determinism-run",
                "--run", Integer.toString(index), "--out-dir", tmp.toString(), "--tune-cache", tmp.resolve("tune.properties").toString()));
        for (String k : List.of("config", "shape", "model", "device", "amp", "seed", "batch", "seq", "train")) {
            if (a.get(k, null) != null) {
                cmd.addAll(List.of("--" + k, a.get(k, null)));
            }
        }
        if (a.flag("deterministic")) {
            cmd.add("--deterministic");
        }
        Path errFile = tmp.resolve("run-" + index + ".err");
        try {
            Process p = new ProcessBuilder(cmd).redirectError(errFile.toFile()).start();
            byte[] stdout = p.getInputStream().readAllBytes();
            if (!p.waitFor(600, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new LanternException("determinism: run " + index + " took over 600 s");
            }
            if (p.exitValue() != 0) {
                List<String> lines = Files.readAllLines(errFile, StandardCharsets.UTF_8).stream()
                        .filter(l -> !l.startsWith("WARNING: Using incubator")).toList();
                throw new LanternException("determinism: run " + index + " failed (exit " + p.exitValue() + "): "
                        + (lines.isEmpty() ? "(no message)" : lines.getLast()));
            }
            String line = new String(stdout, StandardCharsets.UTF_8).strip();
            @SuppressWarnings("unchecked")
            Map<String, Object> r = (Map<String, Object>) plain(JsonParser.parse(line.getBytes(StandardCharsets.UTF_8), 16));
            return r;
        } catch (IOException e) {
            throw new LanternException("determinism: cannot run run " + index + ": " + TextFiles.reason(e), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LanternException("determinism: interrupted", e);
        }
    }

    /** A parsed JSON value as Java maps, lists, strings, numbers (as their text) and booleans. */
    private static Object plain(JsonValue v) {
        return switch (v) {
            case JsonValue.JsonObject o -> {
                Map<String, Object> m = new LinkedHashMap<>();
                o.members().forEach((k, x) -> m.put(k, plain(x)));
                yield m;
            }
            case JsonValue.JsonArray arr -> arr.elements().stream().map(DeterminismCommand::plain).toList();
            case JsonValue.JsonString s -> s.value();
            case JsonValue.JsonNumber n -> n.longValueOrNull() != null ? (Object) n.longValueOrNull() : n.literal();
            case JsonValue.JsonBoolean b -> b.value();
            case JsonValue.JsonNull x -> "null";
        };
    }

    /** A run's output hash: its one output's SHA-256, or the SHA-256 of {@code name:sha} lines for several. */
    static String outputHash(Map<String, Object> record) {
        List<?> outs = (List<?>) record.get("outputs");
        if (outs.size() == 1) {
            return String.valueOf(((Map<?, ?>) outs.getFirst()).get("sha256"));
        }
        StringBuilder b = new StringBuilder();
        outs.forEach(o -> b.append(((Map<?, ?>) o).get("name")).append(':').append(((Map<?, ?>) o).get("sha256")).append('\n'));
        return DeterminismRun.sha256(b.toString().getBytes(StandardCharsets.UTF_8));
    }

    /** ‖b − a‖ / ‖a‖ over the values (float64 sums); infinite when the shapes differ or a value is not finite. */
    static double relDiff(Tensor a, Tensor b) {
        if (!a.shape().equals(b.shape())) {
            return Double.POSITIVE_INFINITY;
        }
        double[] x = a.toDoubles();
        double[] y = b.toDoubles();
        double num = 0;
        double den = 0;
        for (int i = 0; i < x.length; i++) {
            num += (y[i] - x[i]) * (y[i] - x[i]);
            den += x[i] * x[i];
        }
        double r = den == 0 ? (num == 0 ? 0 : Double.POSITIVE_INFINITY) : Math.sqrt(num / den);
        return Double.isNaN(r) ? (Arrays.equals(x, y) ? 0 : Double.POSITIVE_INFINITY) : r;
    }

    private static List<Integer> threads(String text) {
        if (text == null) {
            return List.of();
        }
        List<Integer> t = new ArrayList<>();
        for (String s : text.split(",")) {
            try {
                int n = Integer.parseInt(s.trim());
                if (n < 1 || n > 4096) {
                    throw new NumberFormatException();
                }
                t.add(n);
            } catch (NumberFormatException e) {
                throw new UsageException("determinism: --threads takes thread counts >= 1 separated by commas, found '" + text + "'");
            }
        }
        return t;
    }

    private static void deleteQuietly(Path dir) {
        try (var s = Files.walk(dir)) {
            for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException ignored) {
            // a temporary folder left behind is not worth failing the gate for
        }
    }

}
