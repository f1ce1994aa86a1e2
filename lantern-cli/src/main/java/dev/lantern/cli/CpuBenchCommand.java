package dev.lantern.cli;

import dev.lantern.bench.cpu.CpuBench;
import dev.lantern.bench.cpu.CpuMachine;
import dev.lantern.bench.cpu.CpuReport;
import dev.lantern.bench.cpu.CpuTarget;
import dev.lantern.bench.cpu.TorchPeer;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.metrics.LanternMetrics;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * {@code lantern bench cpu --config NAME | --shape B,S,H,N,M[,encoder] | --model MODEL.onnx|DIR [--batch B --seq S]
 * [--onnx FILE] [--threads N] [--rounds R] [--warmups W] [--metrics-port P [--metrics-host H]] [--json] [--out FILE]}: Lantern's compiled CPU
 * forward timed beside ONNX Runtime's on the same graph, with the per-kernel step table (issue 15). The
 * measurement lives in lantern-bench ({@link CpuBench}); this class reads the command line, shows
 * progress on a terminal only, prints and stores the results.
 */
final class CpuBenchCommand {
    private CpuBenchCommand() {}

    /** What {@code --model DIR} runs: the export as is (make_gpt2_small.py's folder), else its head-transposed copy. */
    static final List<String> DIR_MODELS = List.of("model.onnx", "model_head_t.onnx");

    static int run(List<String> argv, PrintStream out, PrintStream err) {
        Args a = Args.parse("bench cpu", argv, Set.of("json", "torch"),
                Set.of("config", "shape", "model", "batch", "seq", "onnx", "threads", "rounds", "warmups", "out", "seed", "trace",
                        "metrics-port", "metrics-host"));
        Path traceFile = TraceOption.parse("bench cpu", a.get("trace", null));
        MetricsOption.Spec metricsSpec = MetricsOption.parse("bench cpu", a.get("metrics-port", null), a.get("metrics-host", null));
        if (!a.positional().isEmpty()) {
            throw new UsageException("bench cpu: unexpected argument '" + a.positional().getFirst()
                    + "' (bench cpu --config NAME|--shape B,S,H,N,M|--model MODEL.onnx|DIR [--threads N] [--json])");
        }
        String modelArg = a.get("model", null);
        BlockConfig cfg = BlockOption.of("bench cpu", a.get("config", null), a.get("shape", null));
        if (modelArg != null && cfg != null) {
            throw new UsageException("bench cpu: --model and --" + (a.get("config", null) != null ? "config" : "shape")
                    + " both name what to time; give one");
        }
        Path model = modelArg == null ? null : modelFile(modelArg);
        if (model == null) {
            for (String modelOnly : List.of("batch", "seq")) {
                if (a.get(modelOnly, null) != null) {
                    throw new UsageException("bench cpu: --" + modelOnly + " applies to --model only (a block's shape is --shape)");
                }
            }
        }
        Path peer = null;
        if (a.get("onnx", null) != null) {
            if (model != null) {
                throw new UsageException("bench cpu: --onnx names the peer's file for a block; with --model the peer runs that file");
            }
            peer = Path.of(a.get("onnx", null));
            if (!Files.isRegularFile(peer)) {
                throw new UsageException("bench cpu: --onnx " + peer + " is not a file");
            }
        }
        int rounds = a.getInt("bench cpu", "rounds", 20, 1, 1_000_000);
        int warmups = a.getInt("bench cpu", "warmups", 20, 0, 1_000_000);
        int batch = a.getInt("bench cpu", "batch", 1, 1, 1 << 16);
        int seq = a.getInt("bench cpu", "seq", 128, 1, 1 << 20);
        long seed = a.getLong("bench cpu", "seed", 42);
        int threads = ThreadsOption.apply("bench cpu", a);

        // the metrics before the compile, so that its kernels count in compiles_total
        try (TraceOption.Traced trace = TraceOption.start("bench cpu", traceFile, err);
             MetricsOption.Served metrics = MetricsOption.start("bench cpu", metricsSpec, err)) {
            return run(a, model, cfg, peer, rounds, warmups, batch, seq, seed, threads, metrics.metrics, out);
        }
    }

    private static int run(Args a, Path model, BlockConfig cfg, Path peer, int rounds, int warmups, int batch, int seq, long seed,
            int threads, LanternMetrics metrics, PrintStream out) {
        BlockConfig block = cfg != null ? cfg : BlockConfig.named("cpu-small");
        CpuTarget target = model != null ? CpuTarget.onnx(model, batch, seq, seed) : CpuTarget.block(block, seed);
        Path peerFile = model != null ? model : peer;
        String torchSpec = a.flag("torch") ? torchSpec(a.get("model", null), model, cfg, batch, seq) : null;
        String loadStart = CpuMachine.loadAverage();
        CpuBench.Result r;
        try (TorchPeer torch = torchSpec == null ? null : new TorchPeer(python(),
                Repository.root().resolve("scripts/bench/torch_peer.py"), torchSpec, threads);
             ProgressBar bar = ProgressBar.forTerminal("bench cpu " + target.name(),
                     CpuBench.forwards(rounds, warmups, 1 + (peerFile != null ? 1 : 0) + (torch != null ? 1 : 0)), "forwards")) {
            r = CpuBench.run(target, peerFile, torch, threads, rounds, warmups, bar::update);
        }
        record(metrics, r, model != null ? (long) batch * seq : (long) block.batch() * block.seq());
        String commit = CpuMachine.commit();
        Path file = a.get("out", null) != null ? Path.of(a.get("out", null)) : CpuReport.defaultFile(Path.of(""), commit, r.caseName(), r.threads());
        CpuReport.write(file, CpuReport.file(List.of(r), commit, loadStart, CpuMachine.loadAverage()));
        if (a.flag("json")) {
            CpuReport.records(r).forEach(out::println);
        } else {
            CpuReport.table(r).forEach(out::println);
            if (peerFile == null) {
                out.println("  (no peer: give --onnx FILE, the block exported by scripts/bench/export_block.py, to time ONNX Runtime beside it)");
            }
            out.println("results: " + file);
        }
        return 0;
    }

    /**
     * Lantern's side of a result into the metrics: the median forward as a step (step_time_ms, tokens_per_s over
     * {@code tokens}) and the profiled forward's DRAM GB/s (cost-model bytes ÷ kernel time, as {@code bench macro}
     * computes it on the GPU). The CPU has no occupancy figure: occ_pct is left alone. The executor counted its
     * launches and the compiler its kernels as they ran ({@link dev.lantern.trace.RuntimeCounters}).
     */
    static void record(LanternMetrics metrics, CpuBench.Result r, long tokens) {
        metrics.kernelFigures(Double.NaN, r.dramGbps());
        metrics.recordStep(r.lanternMs(), tokens);
    }

    /**
     * What torch_peer.py builds for {@code --torch}: the block's shape, or for {@code --model DIR}
     * (make_gpt2_small.py's folder, the one model the CPU bench times) GPT-2-small at the batch and
     * sequence given. An ONNX file has no PyTorch twin to time.
     */
    private static String torchSpec(String modelArg, Path model, BlockConfig cfg, int batch, int seq) {
        if (model != null) {
            if (!Files.isDirectory(Path.of(modelArg))) {
                throw new UsageException("bench cpu: --torch times a block, or GPT-2-small for --model DIR (make_gpt2_small.py's folder);"
                        + " an ONNX file has no PyTorch twin");
            }
            return "gpt2:" + batch + "x" + seq;
        }
        BlockConfig c = cfg != null ? cfg : BlockConfig.named("cpu-small");
        return c.batch() + "," + c.seq() + "," + c.hidden() + "," + c.heads() + "," + c.mlp() + "," + (c.decoder() ? "decoder" : "encoder");
    }

    /** The interpreter for the PyTorch peer: {@code -Dlantern.python}, else {@code $LANTERN_PYTHON}, else {@code python3}. */
    private static String python() {
        String p = System.getProperty("lantern.python");
        return p != null ? p : System.getenv().getOrDefault("LANTERN_PYTHON", "python3");
    }

    /** --model's file: an .onnx file, or a folder holding one of {@link #DIR_MODELS}. */
    private static Path modelFile(String arg) {
        Path p = Path.of(arg);
        if (Files.isRegularFile(p) && arg.endsWith(".onnx")) {
            return p;
        }
        if (Files.isDirectory(p)) {
            for (String name : DIR_MODELS) {
                if (Files.isRegularFile(p.resolve(name))) {
                    return p.resolve(name);
                }
            }
        }
        throw new UsageException("bench cpu: --model takes an .onnx file or a folder holding " + String.join(" or ", DIR_MODELS)
                + ", found '" + arg + "'");
    }

}
