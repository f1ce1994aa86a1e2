package dev.lantern.cli;

import dev.lantern.Device;
import dev.lantern.DeviceUnavailableException;
import dev.lantern.Lantern;
import dev.lantern.RunMode;
import dev.lantern.engine.CompileOptions;
import dev.lantern.ir.LanternException;
import dev.lantern.onnx.OnnxInput;
import dev.lantern.onnx.OnnxModel;
import dev.lantern.tensor.Npy;
import dev.lantern.tensor.Tensor;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * {@code lantern run MODEL.onnx}: an ONNX model opened with {@link OnnxModel}, its symbolic dims bound
 * from the command line ({@link OnnxShapes}), imported and compiled for those shapes, run on a device
 * with the model's own weights. Inputs come from {@code --input NAME=FILE.npy}, {@code --tokens} or are
 * made as {@link OnnxInputs} says. Prints what {@code run FILE.ir} prints, and for a language-model head
 * the top token ids of the last position ({@link TopTokens}).
 */
final class OnnxRunCommand {
    static final String USAGE = "MODEL.onnx [--device auto|cpu|cuda|cuda:N] [--input NAME=FILE.npy ... | --tokens 1,2,3 | "
            + "--batch B --seq S [--vocab V]] [--shape NAME=d0,d1,...] [--amp none|bf16|f16] [--mode eager|compiled|graph] "
            + "[--seed N] [--runs N] [--out DIR] [--json]";
    /** The options only ONNX models take (beside the repeated {@code --shape}). */
    static final Set<String> OPTIONS = Set.of("tokens", "batch", "seq", "vocab");

    private OnnxRunCommand() {}

    /** An IR file with ONNX-only options: a bad command line rather than options silently ignored. */
    static void refuseOnnxOptions(String command, Args a, RepeatedOptions repeated) {
        for (String o : List.of("tokens", "batch", "seq", "vocab")) {
            if (a.get(o, null) != null) {
                throw new UsageException(command + ": --" + o + " applies to ONNX models (MODEL.onnx), not to IR files");
            }
        }
        if (!repeated.get("shape").isEmpty()) {
            throw new UsageException(command + ": --shape applies to ONNX models (MODEL.onnx); an IR file's shapes are in the file");
        }
    }

    static int run(Args a, RepeatedOptions repeated, dev.lantern.metrics.LanternMetrics metrics, PrintStream out) {
        String file = a.positional().getFirst();
        if (a.get("weights", null) != null) {
            throw new UsageException("run: --weights applies to IR files; an ONNX model holds its own weights");
        }
        String deviceText = a.get("device", "auto");
        Device device = deviceText.equals("auto") ? Lantern.bestDevice() : UsageException.option("run", () -> Device.parse(deviceText));
        CompileOptions.Amp amp = UsageException.option("run", () -> CompileOptions.Amp.parse(a.get("amp", "none")));
        RunMode mode = UsageException.option("run", () -> RunMode.parse(a.get("mode", "compiled")));
        long seed = a.getLong("run", "seed", 0);
        int runs = a.getInt("run", "runs", 10, 1, 1_000_000);
        Long batch = positive(a, "batch");
        Long seq = positive(a, "seq");
        Long vocabOption = positive(a, "vocab");
        String tokens = a.get("tokens", null);
        Map<String, String> inputFiles = RepeatedOptions.byName("run", "input", repeated.get("input"), "FILE.npy");
        Map<String, long[]> shapeSpecs = OnnxShapes.parse("run", repeated.get("shape"));
        if (tokens != null && (batch != null || seq != null)) {
            throw new UsageException("run: --tokens gives the ids and their shape [1, n]; --batch and --seq are for random ids");
        }
        try {
            Lantern.backend(device);
        } catch (DeviceUnavailableException e) {
            throw new UsageException("run: --device " + deviceText + ": " + e.getMessage());
        }
        Path outDir = a.get("out", null) == null ? null : RunCommand.outDir(Path.of(a.get("out", null)));

        CompileOptions options = CompileOptions.defaults().withAmp(amp).withTarget(device.target())
                .withDeterministic(a.flag("deterministic"));
        OnnxModel model = OnnxModel.open(Path.of(file), options);
        OnnxInput ids = OnnxInputs.ids(model);
        Map<String, Tensor> given = new LinkedHashMap<>();
        Map<String, String> sources = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : inputFiles.entrySet()) {
            OnnxInput in = input(model, e.getKey(), "--input " + e.getKey() + "=...");
            Tensor t = Npy.read(Path.of(e.getValue()));
            if (in.dtype() != null && in.dtype().isFloating() != t.dtype().isFloating()) {
                throw new LanternException("--input " + e.getKey() + "=" + e.getValue() + ": the model declares " + in
                        + ", the file holds " + t.dtype() + " (floats and integers do not convert)");
            }
            given.put(e.getKey(), t);
            sources.put(e.getKey(), "file " + e.getValue());
        }
        if (tokens != null) {
            if (ids == null) {
                throw new UsageException("run: --tokens: " + file + " has no token-id input (an integer input named input_ids, or "
                        + "the only integer input); its inputs: " + OnnxShapes.describe(model.inputs()));
            }
            if (given.containsKey(ids.name())) {
                throw new UsageException("run: --tokens and --input " + ids.name() + " both give input '" + ids.name() + "'");
            }
            given.put(ids.name(), OnnxInputs.tokens(tokens, ids.dtype()));
            sources.put(ids.name(), "tokens");
        }
        Map<String, long[]> known = new LinkedHashMap<>(shapeSpecs);
        for (Map.Entry<String, Tensor> e : given.entrySet()) {
            if (known.containsKey(e.getKey())) {
                throw new UsageException("run: --shape " + e.getKey() + " and the value given for it both set its shape");
            }
            known.put(e.getKey(), java.util.Arrays.stream(e.getValue().shape().dims()).asLongStream().toArray());
        }
        Map<String, long[]> shapes = OnnxShapes.bind("run", model, known, batch, seq);
        Long vocab = vocabOption != null ? vocabOption
                : ids != null && model.embeddingRows(ids.name()).isPresent() ? model.embeddingRows(ids.name()).getAsLong() : null;

        long t0 = System.nanoTime();
        OnnxModel.Compiled c = compile(model, shapes, options, file);
        double compileMs = (System.nanoTime() - t0) / 1e6;
        OnnxInputs.Filled inputs = OnnxInputs.fill(model, c.program(), given, sources, ids, vocab, seed);
        RunCommand.Timed t;
        try (var w = c.weights()) {
            t = RunCommand.timed(c.program(), device, w, mode, inputs.tensors(), runs, metrics);
        }

        // outputs under their ONNX names, in the model's order (the program's outputs are its SSA names)
        Map<String, Tensor> outputs = new LinkedHashMap<>();
        List<String> valueNames = c.program().outputNames();
        for (int i = 0; i < valueNames.size(); i++) {
            outputs.put(model.outputNames().get(i), t.outputs().get(valueNames.get(i)));
        }
        OutputReport report = OutputReport.of(outputs, vocab);
        List<String> lines = report.lines();
        List<Map<String, Object>> jsonOutputs = report.json();
        if (outDir != null) {
            Set<String> names = new HashSet<>();
            for (Map.Entry<String, Tensor> e : outputs.entrySet()) {
                String name = fileName(e.getKey());
                if (!names.add(name)) {
                    throw new LanternException("--out: outputs '" + e.getKey() + "' and another both become " + name + ".npy");
                }
                OutputFile.writeAtomically(outDir.resolve(name + ".npy"), Npy.toBytes(e.getValue()));
            }
        }
        String modeText = mode.name().toLowerCase(Locale.ROOT);
        String ampText = amp.name().toLowerCase(Locale.ROOT);
        if (a.flag("json")) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("file", file);
            r.put("format", "onnx");
            r.put("opset", model.opset());
            Map<String, Object> shapeJson = new LinkedHashMap<>();
            c.shapes().forEach((k, v) -> shapeJson.put(k, java.util.Arrays.stream(v).boxed().toList()));
            r.put("shapes", shapeJson);
            r.put("inputs", inputs.sources());
            r.put("vocab", vocab);
            r.put("compile_ms", DemoCommand.round(compileMs, 1));
            r.put("device", device.toString());
            r.put("mode", modeText);
            r.put("amp", ampText);
            r.put("seed", seed);
            r.put("runs", runs);
            r.put("warmup_runs", t.warmups());
            r.put("ms", DemoCommand.round(t.medianMs(), 4));
            r.put("graph_replays", t.stats().graphReplays());
            r.put("graph_fallbacks", new LinkedHashMap<>(t.stats().graphFallbacks()));
            r.put("outputs", jsonOutputs);
            if (outDir != null) {
                r.put("out", outDir.toString());
            }
            out.println(Json.write(r));
            return 0;
        }
        out.printf("model     %s (onnx opset %d, %d inputs, %d params, %d outputs)%n", file, model.opset(), model.inputs().size(),
                c.program().graph().params().size(), outputs.size());
        out.printf(Locale.ROOT, "shapes    %s (imported and compiled in %.0f ms)%n", OnnxShapes.text(c.shapes()), compileMs);
        List<String> src = new ArrayList<>();
        inputs.sources().forEach((k, v) -> src.add(k + ": " + v));
        out.println("inputs    " + String.join("; ", src));
        out.printf("device    %s, mode %s, amp %s, seed %d%n", device, modeText, ampText, seed);
        out.printf(Locale.ROOT, "ms        %.4f median of %d forwards after %d warm-up forwards%s%n", t.medianMs(), runs, t.warmups(),
                mode == RunMode.GRAPH ? String.format(" (graph replays %d of %d)", t.stats().graphReplays(), t.stats().forwards()) : "");
        lines.forEach(out::println);
        if (outDir != null) {
            out.println("wrote     " + outputs.size() + " .npy file(s) to " + outDir);
        }
        return 0;
    }

    /** Imports and compiles, with a progress line on a terminal (two stages: import, compile). */
    static OnnxModel.Compiled compile(OnnxModel model, Map<String, long[]> shapes, CompileOptions options, String file) {
        try (ProgressBar bar = ProgressBar.forTerminal("lantern: importing and compiling " + Path.of(file).getFileName(), 2, "stages")) {
            OnnxModel.Compiled c = model.compile(shapes, options, stage -> bar.update(stage.equals("import") ? 0 : 1));
            bar.update(2);
            return c;
        }
    }

    private static OnnxInput input(OnnxModel model, String name, String what) {
        return model.inputs().stream().filter(i -> i.name().equals(name)).findFirst().orElseThrow(() -> new UsageException(
                "run: " + what + ": " + model.source() + " has no input named '" + name + "' (its inputs: "
                        + OnnxShapes.describe(model.inputs()) + ")"));
    }

    private static Long positive(Args a, String name) {
        return a.get(name, null) == null ? null : (long) a.getInt("run", name, 1, 1, Integer.MAX_VALUE);
    }

    /** An ONNX output name as a file name: characters other than letters, digits, {@code _ . -} become {@code _}. */
    static String fileName(String output) {
        String s = output.replaceAll("[^A-Za-z0-9_.\\-]", "_");
        return s.startsWith(".") || s.isEmpty() ? "_" + s : s;
    }
}
