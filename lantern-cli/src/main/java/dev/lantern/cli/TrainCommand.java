package dev.lantern.cli;

import dev.lantern.Device;
import dev.lantern.checkpoint.CheckpointStore;
import dev.lantern.checkpoint.CorruptCheckpoint;
import dev.lantern.cpu.CpuConfig;
import dev.lantern.engine.CompileOptions;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.ir.LanternException;
import dev.lantern.train.run.LanguageModel;
import dev.lantern.train.run.StepResult;
import dev.lantern.train.run.TrainOptions;
import dev.lantern.train.run.Trainer;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * {@code lantern train --config NAME | --shape B,S,H,N,M[,encoder] | --model MODEL.onnx [--steps N] [--batch B] [--seq S]
 * [--lr X] [--vocab V] [--amp none|bf16|f16] [--device cpu|cuda|cuda:N] [--seed N] [--threads N] [--deterministic]
 * [--checkpoint-dir D [--checkpoint-every N] [--resume] [--keep N]] [--metrics-port P [--metrics-host H]] [--json]}: trains a one-block
 * language model, or an imported ONNX one (ids in, logits out), on the generated next-token task (docs/training.md), with a progress bar on a
 * terminal (loss, tokens/s, loss scale) and, with {@code --json}, one object at the end.
 */
final class TrainCommand {
    static final String USAGE = "train --config NAME|--shape B,S,H,N,M[,encoder]|--model MODEL.onnx [--steps N] [--batch B] [--seq S] [--lr X] [--vocab V]"
            + " [--accumulate K] [--optimizer adamw|sgd] [--momentum M] [--amp none|bf16|f16] [--device cpu|cuda|cuda:N] [--seed N] [--threads N] [--deterministic] [--tune]"
            + " [--checkpoint-dir D [--checkpoint-every N] [--resume] [--keep N]] " + MetricsOption.USAGE + " " + TraceOption.USAGE + " [--json]";

    private TrainCommand() {}

    static int run(java.util.List<String> argv, PrintStream out, PrintStream err) {
        Args a = Args.parse("train", argv, Set.of("json", "resume", "deterministic", "tune"),
                Set.of("config", "shape", "model", "steps", "batch", "seq", "lr", "vocab", "amp", "device", "seed", "threads",
                        "checkpoint-dir", "checkpoint-every", "keep", "weight-decay", "clip", "accumulate", "optimizer", "momentum",
                        "metrics-port", "metrics-host", "trace"));
        a.noPositional("train");
        String modelArg = a.get("model", null);
        BlockConfig block = BlockOption.of("train", a.get("config", null), a.get("shape", null));
        if (block == null && modelArg == null) {
            throw new UsageException("train: name the model with --config NAME, --shape B,S,H,N,M or --model MODEL.onnx (" + USAGE + ")");
        }
        if (block != null && modelArg != null) {
            throw new UsageException("train: --model and --" + (a.get("config", null) != null ? "config" : "shape") + " both name the model; give one");
        }
        if (modelArg != null) {
            onnxFile("train", modelArg);
        }
        if (modelArg != null && a.get("vocab", null) != null) {
            throw new UsageException("train: --vocab is the model's own with --model (its logits' last dimension)");
        }
        int batch = a.getInt("train", "batch", block == null ? 2 : block.batch(), 1, 1 << 16);
        int seq = a.getInt("train", "seq", block == null ? 64 : block.seq(), 2, 1 << 20);
        BlockConfig cfg = block == null ? null
                : new BlockConfig(block.name(), batch, seq, block.hidden(), block.heads(), block.mlp(), block.decoder());
        String deviceArg = a.get("device", "cpu");
        // auto stays on the CPU: the GPU step is opt-in (docs/training.md, "Training on CUDA")
        Device device = deviceArg.equals("auto") ? Device.cpu()
                : UsageException.option("train", () -> Device.parse(deviceArg));
        if (!device.kind().equals("cpu") && !dev.lantern.Lantern.devices().contains(device)) {
            throw new UsageException("train: --device " + device + " is not available here (lantern doctor says why)");
        }
        int steps = a.getInt("train", "steps", 200, 1, Integer.MAX_VALUE);
        CompileOptions.Amp amp = UsageException.option("train", () -> CompileOptions.Amp.parse(a.get("amp", "none")));
        double lr = number(a, "lr", TrainOptions.defaults().lr());
        TrainOptions o = new TrainOptions(a.getInt("train", "vocab", 64, 3, 1 << 24), lr, number(a, "weight-decay", 0.01),
                number(a, "clip", 1.0), amp, a.getLong("train", "seed", 0), ThreadsOption.apply("train", a), a.flag("deterministic"),
                a.getInt("train", "accumulate", 1, 1, 1 << 16), a.flag("tune"),
                UsageException.option("train", () -> TrainOptions.Kind.parse(a.get("optimizer", "adamw"))), number(a, "momentum", 0.9));
        if (o.optimizer() != TrainOptions.Kind.SGD && a.get("momentum", null) != null) {
            throw new UsageException("train: --momentum is SGD's (--optimizer sgd)");
        }
        Path ckptDir = a.get("checkpoint-dir", null) == null ? null : Path.of(a.get("checkpoint-dir", null));
        int every = a.getInt("train", "checkpoint-every", 50, 1, Integer.MAX_VALUE);
        int keep = a.getInt("train", "keep", 3, 1, 1 << 20);
        if (ckptDir == null && (a.flag("resume") || a.get("checkpoint-every", null) != null || a.get("keep", null) != null)) {
            throw new UsageException("train: --resume, --checkpoint-every and --keep need --checkpoint-dir D");
        }
        MetricsOption.Spec metricsSpec = MetricsOption.parse("train", a.get("metrics-port", null), a.get("metrics-host", null));
        Path traceFile = TraceOption.parse("train", a.get("trace", null));

        LanguageModel lm;
        String name;
        if (cfg != null) {
            lm = LanguageModel.of(cfg, o.vocab(), o.seed());
            name = cfg.name();
        } else {
            lm = onnxModel("train", Path.of(modelArg), batch, seq);
            o = o.withVocab(lm.vocab());
            name = Path.of(modelArg).getFileName().toString();
        }
        Map<String, Object> json = new LinkedHashMap<>();
        try (TraceOption.Traced trace = TraceOption.start("train", traceFile, err);
             MetricsOption.Served metrics = MetricsOption.start("train", metricsSpec, err);
             Trainer t = new Trainer(lm, o, device);
             CheckpointStore store = ckptDir == null ? null : CheckpointStore.open(ckptDir, CheckpointStore.Options.defaults().withKeepLast(keep))) {
            long resumedFrom = -1;
            if (store != null && a.flag("resume") && !store.committedSteps().isEmpty()) {
                CheckpointStore.Restored r = store.restoreLatest();
                for (CorruptCheckpoint c : r.skipped()) {
                    err.println("lantern train: skipped a corrupt checkpoint: " + c);
                }
                t.restore(r.checkpoint());
                resumedFrom = r.checkpoint().step();
            }
            double first = Double.NaN;
            double last = Double.NaN;
            java.util.ArrayDeque<Double> recent = new java.util.ArrayDeque<>(); // the last 10 losses: one batch's loss is noisy
            long nanos = 0;
            long timed = 0;
            try (ProgressBar bar = ProgressBar.forTerminal("train " + name, steps, "steps")) {
                bar.update(t.steps());
                while (t.steps() < steps) {
                    StepResult r = t.step();
                    metrics.metrics.recordTrainStep(r, t.tokensPerStep());
                    if (Double.isNaN(first)) {
                        first = r.loss();
                    }
                    last = r.loss();
                    recent.addLast(r.loss());
                    if (recent.size() > 10) {
                        recent.removeFirst();
                    }
                    if (r.step() > 1 && r.step() > resumedFrom + 1) { // the first step of a process carries the JIT's warm-up
                        nanos += r.nanos();
                        timed++;
                    }
                    bar.status(String.format(Locale.ROOT, "loss %.4f  %.0f tok/s  scale %.0f", r.loss(),
                            t.tokensPerStep() / (r.nanos() / 1e9), r.scale()));
                    bar.update(t.steps());
                    if (store != null && t.steps() % every == 0) {
                        store.write(t.checkpoint());
                    }
                }
            }
            double stepMs = timed == 0 ? Double.NaN : nanos / 1e6 / timed;
            json.put("model", name);
            json.put("steps", t.steps());
            json.put("resumed_from", resumedFrom);
            json.put("amp", amp.name().toLowerCase(Locale.ROOT));
            json.put("accumulate", o.accumulate());
            json.put("optimizer", o.optimizer().name().toLowerCase(java.util.Locale.ROOT));
            json.put("tokens_per_step", t.tokensPerStep());
            json.put("first_loss", first);
            json.put("last_loss", last);
            json.put("last10_mean_loss", recent.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN));
            json.put("step_ms", stepMs);
            json.put("tokens_per_s", timed == 0 ? Double.NaN : t.tokensPerStep() / (stepMs / 1e3));
            json.put("overflows", t.scaler() == null ? 0 : t.scaler().overflows());
            json.put("skipped_steps", t.scaler() == null ? 0 : t.scaler().skippedSteps());
            json.put("loss_scale", t.scaler() == null ? 1.0 : t.scaler().scale());
            json.put("deterministic", o.deterministic());
            json.put("device", device.toString());
            json.put("threads", CpuConfig.THREADS);
            json.put("weights_hash", t.weightsHash());
        }
        if (a.flag("json")) {
            out.println(Json.write(json));
        } else {
            out.printf(Locale.ROOT, "train %s: %d steps, loss %.4f -> %.4f (mean of the last 10), %.1f ms/step, %.0f tokens/s, weights %s%n",
                    name, (long) json.get("steps"), (double) json.get("first_loss"), (double) json.get("last10_mean_loss"),
                    (double) json.get("step_ms"), (double) json.get("tokens_per_s"), json.get("weights_hash"));
        }
        return ExitStatus.OK;
    }

    /** An ONNX language model with its one integer input bound to (batch, seq), its initializers as the starting weights. */
    /** {@code --model}'s value as a path: an existing ONNX file, else a usage error of {@code command}. */
    static Path onnxFile(String command, String arg) {
        if (!ModelFormat.isOnnx(arg) || !java.nio.file.Files.isRegularFile(Path.of(arg))) {
            throw new UsageException(command + ": --model takes an ONNX file (token ids in, logits out), found '" + arg + "'");
        }
        return Path.of(arg);
    }

    /** An ONNX language model (one input of token ids, logits out) with the loss appended, for {@code command}. */
    static LanguageModel onnxModel(String command, Path file, int batch, int seq) {
        var probe = dev.lantern.onnx.OnnxModel.open(file, CompileOptions.defaults());
        var ints = probe.inputs().stream().filter(i -> !i.dtype().isFloating()).toList();
        if (probe.inputs().size() != 1 || ints.size() != 1) {
            throw new LanternException(command + ": " + file + " takes " + probe.inputs().stream().map(i -> i.name()).toList()
                    + "; training feeds one input of token ids (a language model's input_ids) and nothing else");
        }
        String ids = ints.getFirst().name();
        var imported = dev.lantern.onnx.OnnxImporter.importFile(file, Map.of(ids, new long[] {batch, seq}));
        return LanguageModel.ofLogits(imported.graph(), ids, imported.params());
    }

    private static double number(Args a, String name, double dflt) {
        String v = a.get(name, null);
        if (v == null) {
            return dflt;
        }
        try {
            double d = Double.parseDouble(v);
            if (!Double.isFinite(d)) {
                throw new NumberFormatException();
            }
            return d;
        } catch (NumberFormatException e) {
            throw new UsageException("train: --" + name + " takes a finite number, found '" + v + "'");
        }
    }

}
