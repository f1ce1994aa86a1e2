package dev.lantern.cli;

import dev.lantern.Device;
import dev.lantern.Lantern;
import dev.lantern.RunMode;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.engine.CompileOptions;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.train.Parameter;
import dev.lantern.train.run.LanguageModel;
import dev.lantern.train.run.StepResult;
import dev.lantern.train.run.TrainOptions;
import dev.lantern.train.run.Trainer;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * {@code lantern bench train --config NAME | --shape B,S,H,N,M[,encoder] | --model MODEL.onnx [--batch B --seq S]
 * [--device cuda|cuda:N|cpu]
 * [--mode graph|compiled|eager] [--amp none|bf16|f16] [--steps N] [--warmups W] [--vocab V] [--seed N]
 * [--deterministic] [--no-tune] [--trace FILE.json] [--json]}:
 * the training step of {@code lantern train} (one block as a language model on the generated task)
 * timed: W warm-up steps, then N timed ones; step time (median and best: the host's wall time from
 * one step's start to its loss; on a GPU also {@code device_step_ms}, each step's span on the device
 * timed by events as {@code scripts/bench/torch_train.py} times PyTorch's), tokens/s from the median,
 * and on a GPU the device memory the run holds at its peak (cuMemGetInfo after every step, less the
 * figure before the trainer opened: the session allocates its arena, weights and outputs once, so
 * the figure between steps is the step's) and the most its allocator held ({@code peak_alloc_bytes},
 * the figure to hold against PyTorch's {@code max_memory_allocated}). On the GPU the step stays
 * there: forward and backward (a CUDA graph replay in graph mode; one kernel per op in eager mode,
 * the naive baseline), the gradients' norm and AdamW, weights and moments never leaving the device
 * (docs/training.md). A compiled step is tuned on the GPU during its first warm-up step (GEMM
 * algorithms and kernel tiles, kept in the tune cache as {@code lantern bench} keeps a forward's),
 * unless {@code --no-tune}.
 */
final class TrainBenchCommand {
    private TrainBenchCommand() {}

    static int run(List<String> argv, PrintStream out, PrintStream err) {
        Args a = Args.parse("bench train", argv, Set.of("json", "deterministic", "no-tune"),
                Set.of("config", "shape", "model", "batch", "seq", "device", "mode", "amp", "steps", "warmups", "vocab", "seed", "trace"));
        if (!a.positional().isEmpty()) {
            throw new UsageException("bench train: unexpected argument '" + a.positional().getFirst() + "'");
        }
        BlockConfig cfg = BlockOption.of("bench train", a.get("config", null), a.get("shape", null));
        String modelArg = a.get("model", null);
        if ((cfg == null) == (modelArg == null)) {
            throw new UsageException("bench train: name the model with one of --config NAME, --shape B,S,H,N,M or --model MODEL.onnx");
        }
        java.nio.file.Path modelFile = modelArg == null ? null : TrainCommand.onnxFile("bench train", modelArg);
        if (cfg != null && (a.get("batch", null) != null || a.get("seq", null) != null)) {
            throw new UsageException("bench train: --batch and --seq bind an ONNX model's dimensions; a block's are in its shape");
        }
        Device device = UsageException.option("bench train", () -> Device.parse(a.get("device", "cuda")));
        if (!device.kind().equals("cpu") && !Lantern.devices().contains(device)) {
            throw new UsageException("bench train: --device " + device + " is not available here (lantern doctor says why)");
        }
        RunMode mode = UsageException.option("bench train", () -> RunMode.parse(a.get("mode", "graph")));
        CompileOptions.Amp amp = UsageException.option("bench train", () -> CompileOptions.Amp.parse(a.get("amp", "none")));
        int steps = a.getInt("bench train", "steps", 10, 1, 1_000_000);
        int warmups = a.getInt("bench train", "warmups", 2, 0, 1_000_000);
        boolean tune = !a.flag("no-tune") && mode != RunMode.EAGER && !device.kind().equals("cpu");
        if (tune && warmups == 0) {
            throw new UsageException("bench train: the first step tunes the compiled step; give --warmups 1 or more, or --no-tune");
        }
        TrainOptions o = TrainOptions.defaults().withAmp(amp).withVocab(a.getInt("bench train", "vocab", 64, 3, 1 << 24))
                .withSeed(a.getLong("bench train", "seed", 0)).withDeterministic(a.flag("deterministic")).withAutotune(tune);
        java.nio.file.Path traceFile = TraceOption.parse("bench train", a.get("trace", null));
        LanguageModel lm;
        String name;
        if (cfg != null) {
            lm = LanguageModel.of(cfg, o.vocab(), o.seed());
            name = cfg.name();
        } else {
            lm = TrainCommand.onnxModel("bench train", modelFile, a.getInt("bench train", "batch", 2, 1, 1 << 16),
                    a.getInt("bench train", "seq", 64, 2, 1 << 20));
            o = o.withVocab(lm.vocab());
            name = modelFile.getFileName().toString();
        }
        CudaDevice gpu = device.kind().equals("cuda") ? CudaDevice.open(device.index()) : null;
        Map<String, Object> json = new LinkedHashMap<>();
        try {
            long before = gpu == null ? 0 : gpu.totalMemory() - gpu.freeMemory();
            long peak = 0;
            double[] ms = new double[steps];
            double first = Double.NaN;
            double last = Double.NaN;
            try (TraceOption.Traced trace = TraceOption.start("bench train", traceFile, err);
                 Trainer t = new Trainer(lm, o, device, mode);
                 ProgressBar bar = ProgressBar.forTerminal("bench train " + name, warmups + steps, "steps")) {
                for (int i = 0; i < warmups + steps; i++) {
                    StepResult r = t.step();
                    if (gpu != null) {
                        peak = Math.max(peak, gpu.totalMemory() - gpu.freeMemory() - before);
                    }
                    if (i >= warmups) {
                        ms[i - warmups] = r.nanos() / 1e6;
                    } else if (i == warmups - 1) {
                        t.stepDeviceMillis(); // the warm-ups' spans are not timed steps
                    }
                    first = Double.isNaN(first) ? r.loss() : first;
                    last = r.loss();
                    bar.update(i + 1);
                }
                double[] sorted = ms.clone();
                Arrays.sort(sorted);
                double median = median(sorted);
                double[] spans = t.stepDeviceMillis();
                Arrays.sort(spans);
                json.put("bench", "train");
                json.put("config", name);
                json.put("device", device.toString());
                json.put("mode", mode.name().toLowerCase(Locale.ROOT));
                json.put("amp", amp.name().toLowerCase(Locale.ROOT));
                json.put("deterministic", o.deterministic());
                json.put("tuned", tune);
                json.put("parameters", t.parameters().stream().mapToLong(Parameter::numel).sum());
                json.put("tokens_per_step", t.tokensPerStep());
                json.put("warmups", warmups);
                json.put("steps", steps);
                json.put("step_ms", median);
                json.put("step_ms_min", sorted[0]);
                json.put("tokens_per_s", t.tokensPerStep() / (median / 1e3));
                // the device's time of each step (events on its stream), as torch_train.py times PyTorch's
                json.put("device_step_ms", spans.length == steps ? median(spans) : null);
                json.put("device_step_ms_min", spans.length == steps ? spans[0] : null);
                json.put("peak_device_bytes", gpu == null ? null : peak);
                json.put("peak_alloc_bytes", t.devicePeakBytes() < 0 ? null : t.devicePeakBytes());
                json.put("first_loss", first);
                json.put("last_loss", last);
                json.put("step", t.resident() ? "forward+backward, norm and AdamW on " + device
                        : "forward+backward on " + device + ", AdamW on the host");
            }
        } finally {
            if (gpu != null) {
                gpu.close();
            }
        }
        if (a.flag("json")) {
            out.println(Json.write(json));
        } else {
            out.printf(Locale.ROOT, "bench train %s on %s (%s, %s): %.3f ms/step (median of %d, best %.3f)%s, %.0f tokens/s%s%n",
                    name, device, json.get("mode"), json.get("amp"), (double) json.get("step_ms"), steps, (double) json.get("step_ms_min"),
                    json.get("device_step_ms") instanceof Double d ? String.format(Locale.ROOT, ", %.3f ms on the device", d) : "",
                    (double) json.get("tokens_per_s"),
                    gpu == null ? "" : String.format(Locale.ROOT, ", peak device memory %,d bytes", (long) json.get("peak_device_bytes")));
        }
        return ExitStatus.OK;
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
