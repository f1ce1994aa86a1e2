package dev.lantern.cli;

import dev.lantern.Device;
import dev.lantern.DeviceUnavailableException;
import dev.lantern.Lantern;
import dev.lantern.Program;
import dev.lantern.RunMode;
import dev.lantern.Weights;
import dev.lantern.engine.CompileOptions;
import dev.lantern.frontend.hf.HfConfig;
import dev.lantern.frontend.hf.HfModel;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.LanternException;
import dev.lantern.ir.Node;
import dev.lantern.tensor.Npy;
import dev.lantern.tensor.Tensor;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code lantern run MODEL_DIR}: a Hugging Face style folder ({@code config.json} and
 * {@code model.safetensors}, or shards with their index) of the GPT-2, LLaMA or BERT family, built by
 * Lantern's own builders ({@link HfModel}) for the batch and sequence asked for, its tensors bound by
 * name from the mapped checkpoint. Token ids from {@code --tokens}, {@code --input input_ids=F.npy}
 * or drawn at random in [0, vocab_size); {@code attention_mask} ones, {@code token_type_ids} zeros.
 * Prints what {@code run MODEL.onnx} prints, the top token ids of a language-model head included.
 */
final class HfRunCommand {
    private HfRunCommand() {}

    /** Whether {@code file} names a model folder: a directory with a config.json. */
    static boolean isModelFolder(String file) {
        Path p = Path.of(file);
        return Files.isDirectory(p) && Files.isRegularFile(p.resolve(HfConfig.FILE_NAME));
    }

    static int run(Args a, RepeatedOptions repeated, dev.lantern.metrics.LanternMetrics metrics, PrintStream out) {
        String folder = a.positional().getFirst();
        if (a.get("weights", null) != null) {
            throw new UsageException("run: --weights applies to IR files; a model folder holds its own weights");
        }
        if (!repeated.get("shape").isEmpty() || a.get("vocab", null) != null) {
            throw new UsageException("run: --shape and --vocab apply to ONNX models; a model folder's config.json gives them");
        }
        String deviceText = a.get("device", "auto");
        Device device = deviceText.equals("auto") ? Lantern.bestDevice() : UsageException.option("run", () -> Device.parse(deviceText));
        CompileOptions.Amp amp = UsageException.option("run", () -> CompileOptions.Amp.parse(a.get("amp", "none")));
        RunMode mode = UsageException.option("run", () -> RunMode.parse(a.get("mode", "compiled")));
        long seed = a.getLong("run", "seed", 0);
        int runs = a.getInt("run", "runs", 10, 1, 1_000_000);
        String tokens = a.get("tokens", null);
        Map<String, String> inputFiles = RepeatedOptions.byName("run", "input", repeated.get("input"), "FILE.npy");
        if (tokens != null && (a.get("batch", null) != null || a.get("seq", null) != null)) {
            throw new UsageException("run: --tokens gives the ids and their shape [1, n]; --batch and --seq are for random ids");
        }
        try {
            Lantern.backend(device);
        } catch (DeviceUnavailableException e) {
            throw new UsageException("run: --device " + deviceText + ": " + e.getMessage());
        }
        Path outDir = a.get("out", null) == null ? null : RunCommand.outDir(Path.of(a.get("out", null)));

        HfModel model = HfModel.open(Path.of(folder));
        Map<String, Tensor> given = new LinkedHashMap<>();
        Map<String, String> sources = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : inputFiles.entrySet()) {
            given.put(e.getKey(), Npy.read(Path.of(e.getValue())));
            sources.put(e.getKey(), "file " + e.getValue());
        }
        if (tokens != null) {
            if (given.containsKey("input_ids")) {
                throw new UsageException("run: --tokens and --input input_ids both give input 'input_ids'");
            }
            given.put("input_ids", OnnxInputs.tokens(tokens, DType.I64));
            sources.put("input_ids", "tokens");
        }
        int batch;
        int seq;
        Tensor ids = given.get("input_ids");
        if (ids != null) {
            if (ids.shape().rank() != 2) {
                throw new LanternException("input_ids must be [batch, seq], given " + ids.dtype() + ids.shape());
            }
            batch = ids.shape().dim(0);
            seq = ids.shape().dim(1);
        } else {
            batch = a.getInt("run", "batch", 1, 1, 1 << 20);
            seq = a.getInt("run", "seq", 8, 1, 1 << 20);
        }
        long t0 = System.nanoTime();
        Graph g = model.graph(batch, seq);
        Program program = Lantern.compile(g, CompileOptions.defaults().withAmp(amp).withTarget(device.target())
                .withDeterministic(a.flag("deterministic")));
        double compileMs = (System.nanoTime() - t0) / 1e6;
        Map<String, Tensor> random = program.randomInputs(seed + 1);
        Map<String, Tensor> inputs = new LinkedHashMap<>();
        for (Node n : g.inputs()) {
            String name = dev.lantern.Bindings.name(n);
            if (given.containsKey(name)) {
                inputs.put(name, given.remove(name));
                continue;
            }
            Tensor t = random.get(name);
            sources.put(name, OnnxInputs.fillDefault(name, t, name.equals("input_ids"), (long) model.vocabSize(), seed));
            inputs.put(name, t);
        }
        if (!given.isEmpty()) {
            throw new UsageException("run: " + folder + " has no input named " + given.keySet() + " (its inputs: " + program.inputNames() + ")");
        }
        RunCommand.Timed t;
        try (Weights w = model.weights()) {
            t = RunCommand.timed(program, device, w, mode, inputs, runs, metrics);
        }
        String outName = model.family() == HfModel.Family.BERT ? "last_hidden_state" : "logits";
        List<String> produced = program.outputNames();
        Map<String, Tensor> outputs = new LinkedHashMap<>();
        for (int i = 0; i < produced.size(); i++) {
            outputs.put(produced.size() == 1 ? outName : outName + i, t.outputs().get(produced.get(i)));
        }
        OutputReport report = OutputReport.of(outputs, (long) model.vocabSize());
        List<String> lines = report.lines();
        List<Map<String, Object>> jsonOutputs = report.json();
        if (outDir != null) {
            for (Map.Entry<String, Tensor> e : outputs.entrySet()) {
                OutputFile.writeAtomically(outDir.resolve(e.getKey() + ".npy"), Npy.toBytes(e.getValue()));
            }
        }
        String modeText = mode.name().toLowerCase(Locale.ROOT);
        String ampText = amp.name().toLowerCase(Locale.ROOT);
        if (a.flag("json")) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("model", folder);
            r.put("family", model.family().modelType());
            r.put("batch", batch);
            r.put("seq", seq);
            r.put("inputs", sources);
            r.put("compile_ms", DemoCommand.round(compileMs, 1));
            r.put("device", device.toString());
            r.put("mode", modeText);
            r.put("amp", ampText);
            r.put("seed", seed);
            r.put("runs", runs);
            r.put("ms", DemoCommand.round(t.medianMs(), 4));
            r.put("graph_replays", t.stats().graphReplays());
            r.put("outputs", jsonOutputs);
            out.println(Json.write(r));
            return 0;
        }
        out.printf("model     %s (%s, %d params)%n", folder, model.family().modelType(), g.params().size());
        out.printf(Locale.ROOT, "shapes    batch %d, seq %d (built and compiled in %.0f ms)%n", batch, seq, compileMs);
        List<String> src = new ArrayList<>();
        sources.forEach((k, v) -> src.add(k + ": " + v));
        out.println("inputs    " + String.join("; ", src));
        out.printf("device    %s, mode %s, amp %s, seed %d%n", device, modeText, ampText, seed);
        out.printf(Locale.ROOT, "ms        %.4f median of %d forwards after %d warm-up forwards%n", t.medianMs(), runs, t.warmups());
        lines.forEach(out::println);
        if (outDir != null) {
            out.println("wrote     " + outputs.size() + " .npy file(s) to " + outDir);
        }
        return 0;
    }
}
