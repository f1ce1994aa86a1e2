package dev.lantern.cli;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cli.cuda.CudaBench;
import dev.lantern.cuda.engine.TuneCache;
import dev.lantern.frontend.nn.BlockConfig;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * {@code lantern bench macro --config decoder|encoder|decoder-small [--device cuda] [--pipeline] [--json]}
 * and {@code lantern bench micro [--device cuda] [--json]}: GPU benchmarks, one record per
 * figure in torch_ref.py's form ({@code case}, {@code impl}, {@code ms}, {@code tflops} or
 * {@code gbps}, {@code peak_mib}). {@code --device} defaults to cuda; without a GPU the command
 * fails with one line and exit status 2. Progress goes to the terminal only. {@code lantern bench cpu}
 * (the CPU forward beside ONNX Runtime, with its per-kernel steps) is {@link CpuBenchCommand}.
 */
final class BenchCommand {
    private BenchCommand() {}

    static int run(List<String> argv, PrintStream out, PrintStream err) {
        if (!argv.isEmpty() && argv.getFirst().equals("cpu")) {
            return CpuBenchCommand.run(argv.subList(1, argv.size()), out, err); // its own options, no GPU
        }
        if (!argv.isEmpty() && argv.getFirst().equals("overhead")) {
            return MetricsOverheadCommand.run(argv.subList(1, argv.size()), out, err); // what serving /metrics costs a step
        }
        if (!argv.isEmpty() && argv.getFirst().equals("train")) {
            return TrainBenchCommand.run(argv.subList(1, argv.size()), out, err); // the training step, GPU or CPU
        }
        Args a = Args.parse("bench", argv, Set.of("json", "no-tune", "deterministic", "pipeline"), Set.of("config", "shape", "device", "seed", "model", "batch", "seq",
                "metrics-port", "metrics-host", "trace"));
        MetricsOption.Spec metricsSpec = MetricsOption.parse("bench", a.get("metrics-port", null), a.get("metrics-host", null));
        java.nio.file.Path traceFile = TraceOption.parse("bench", a.get("trace", null));
        List<String> what = a.positional();
        if (what.size() != 1 || !(what.getFirst().equals("macro") || what.getFirst().equals("micro") || what.getFirst().equals("model"))) {
            throw new UsageException("bench: expected 'macro --config NAME|--shape B,S,H,N,M', 'micro' or 'model --model DIR|MODEL.onnx "
                    + "--batch B --seq S' [--device cuda] [--deterministic] [--json], or 'cpu --config NAME|--shape B,S,H,N,M|--model MODEL.onnx|DIR' [--threads N] [--json]");
        }
        if (what.getFirst().equals("model")) {
            if (a.get("trace", null) != null) {
                throw new UsageException("bench: --trace applies to bench macro, micro and cpu; bench model does not trace yet");
            }
            if (a.flag("pipeline")) {
                throw new UsageException("bench: --pipeline applies to bench macro only");
            }
            return model(a, metricsSpec, out, err);
        }
        for (String modelOnly : List.of("model", "batch", "seq")) {
            if (a.get(modelOnly, null) != null) {
                throw new UsageException("bench: --" + modelOnly + " applies to bench model only");
            }
        }
        String device = a.get("device", "cuda");
        if (!device.equals("cuda")) {
            throw new UsageException("bench: --device takes cuda (the CPU figures are ./lantern demo's), found '" + device + "'");
        }
        List<BlockConfig> configs = new ArrayList<>();
        if (what.getFirst().equals("macro")) {
            if (a.get("shape", null) != null) {
                configs.add(BlockOption.of("bench", a.get("config", null), a.get("shape", null)));
            } else {
                String names = a.get("config", "decoder-small");
                for (String n : names.split(",")) {
                    configs.add(UsageException.option("bench", () -> BlockConfig.named(n.trim())));
                }
            }
        } else {
            if (a.flag("pipeline")) {
                throw new UsageException("bench: --pipeline applies to bench macro only");
            }
            if (a.flag("deterministic")) {
                throw new UsageException("bench: --deterministic applies to bench macro and bench model; bench micro times kernels alone");
            }
            for (String macroOnly : List.of("config", "shape", "seed")) {
                if (a.get(macroOnly, null) != null) {
                    throw new UsageException("bench: --" + macroOnly + " applies to bench macro only; bench micro runs fixed cases");
                }
            }
        }
        if (CudaDevice.count() < 1) {
            err.println("lantern bench: no CUDA device (driver or GPU not found); bench needs --device cuda");
            return 2;
        }
        boolean json = a.flag("json");
        Consumer<String> emit = json ? out::println : line -> out.println(human(line));
        Consumer<String> progress = System.console() != null ? m -> err.println("[bench] " + m) : m -> { };
        TuneCache tune = a.flag("no-tune") ? TuneCache.none() : new TuneCache(TuneCache.defaultFile());
        long seed = a.getLong("bench", "seed", 42);
        try (TraceOption.Traced trace = TraceOption.start("bench", traceFile, err);
             MetricsOption.Served metrics = MetricsOption.start("bench", metricsSpec, err);
             CudaDevice dev = CudaDevice.open(0)) {
            CudaBench bench = new CudaBench(dev, emit, progress, tune).deterministic(a.flag("deterministic")).metrics(metrics.metrics);
            if (configs.isEmpty()) {
                bench.micro();
            } else {
                for (BlockConfig c : configs) {
                    bench.macro(c, seed);
                    if (a.flag("pipeline")) {
                        bench.pipeline(c, seed); // uploads beside the forwards: memcpy/compute overlap from CUDA events
                    }
                }
            }
        }
        return 0;
    }

    /** {@code bench model --model DIR|MODEL.onnx --batch B --seq S}: a Hugging Face folder's or an ONNX file's prefill on GPU 0 (ModelBench). */
    private static int model(Args a, MetricsOption.Spec metricsSpec, PrintStream out, PrintStream err) {
        String dir = a.get("model", null);
        boolean onnx = dir != null && dir.endsWith(".onnx") && java.nio.file.Files.isRegularFile(java.nio.file.Path.of(dir));
        if (dir == null || !(onnx || HfRunCommand.isModelFolder(dir))) {
            throw new UsageException("bench model: --model takes a Hugging Face folder (config.json + safetensors) or an .onnx file, found '"
                    + dir + "'");
        }
        int batch = a.getInt("bench", "batch", 8, 1, 1 << 16);
        int seq = a.getInt("bench", "seq", 512, 1, 1 << 20);
        if (CudaDevice.count() < 1) {
            err.println("lantern bench: no CUDA device (driver or GPU not found); bench needs --device cuda");
            return 2;
        }
        Consumer<String> emit = a.flag("json") ? out::println : line -> out.println(human(line));
        Consumer<String> progress = System.console() != null ? m -> err.println("[bench] " + m) : m -> { };
        TuneCache tune = a.flag("no-tune") ? TuneCache.none() : new TuneCache(TuneCache.defaultFile());
        long seed = a.getLong("bench", "seed", 42);
        try (MetricsOption.Served metrics = MetricsOption.start("bench", metricsSpec, err);
             CudaDevice dev = CudaDevice.open(0)) {
            new CudaBench(dev, emit, progress, tune).deterministic(a.flag("deterministic")).metrics(metrics.metrics)
                    .model(java.nio.file.Path.of(dir), batch, seq, seed);
        }
        return 0;
    }

    /** A record line as text for a terminal: case, impl, ms and the rate. */
    private static String human(String json) {
        return json.replace("{", "").replace("}", "").replace("\"", "");
    }
}
