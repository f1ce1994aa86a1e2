package dev.lantern.cli;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.ffi.CudaLibraries;
import dev.lantern.cuda.ffi.LibraryProbe;
import dev.lantern.cli.cuda.CudaDemo;
import dev.lantern.engine.CompileOptions;
import dev.lantern.frontend.Model;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.GraphHash;
import dev.lantern.ir.IrPrinter;
import dev.lantern.ir.LanternException;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code lantern demo}: build a benchmark block, run it on the best device present, check it
 * against the float64 reference, and print device, config, graph hash, op count, median time per
 * forward and relative error.
 */
final class DemoCommand {
    private DemoCommand() {}

    static int run(List<String> argv, PrintStream out, PrintStream err) {
        Args a = Args.parse("demo", argv, Set.of("json", "force"), Set.of("config", "shape", "dump-ir", "device", "seed", "runs", "amp", "onnx"))
                .noPositional("demo");
        BlockConfig chosen = BlockOption.of("demo", a.get("config", null), a.get("shape", null));
        BlockConfig cfg = chosen != null ? chosen : BlockConfig.named("cpu-small");
        String device = a.get("device", "auto");
        if (!List.of("auto", "cpu", "cuda").contains(device)) {
            throw new UsageException("demo: --device must be auto, cpu or cuda, found '" + device + "'");
        }
        CompileOptions.Amp amp = UsageException.option("demo", () -> CompileOptions.Amp.parse(a.get("amp", "none")));
        long seed = a.getLong("demo", "seed", 0);
        int runs = a.getInt("demo", "runs", 15, 1, 100000);

        Path dumpIr = a.get("dump-ir", null) == null ? null : Path.of(a.get("dump-ir", null));
        String missing = gpuMissing();
        boolean gpu = missing == null && !device.equals("cpu");
        if (device.equals("cuda") && missing != null) {
            // exit 2, as bench and soak: the command line asks for a device that is not there
            throw new UsageException("demo: --device cuda: no usable CUDA device (" + missing + "); --device auto falls back to the CPU");
        }
        Model model = TransformerBlock.build(cfg, DType.F32);
        Graph g = model.graph();
        if (dumpIr != null) {
            OutputFile.writeAtomically(dumpIr, IrPrinter.print(g));
        }
        if (gpu) {
            return runOnGpu(a, cfg, seed, runs, out, err);
        }
        if (device.equals("auto")) {
            err.println("lantern demo: no usable GPU (" + missing + "), the CPU backend serves (see lantern doctor)");
        }
        if (cfg.flops() > CPU_FLOP_LIMIT && !a.flag("force")) {
            throw new LanternException(String.format(java.util.Locale.ROOT,
                    "config %s needs %.1f TFLOP per forward (and a float64 reference of the same): too much for the CPU; "
                            + "use a GPU, a small config (cpu-small, encoder-small, decoder-small) or --force",
                    cfg.name(), cfg.flops() / 1e12));
        }
        CompileOptions options = CompileOptions.defaults().withAmp(amp);
        DemoMetrics m = DemoMetrics.measure(model, seed, options, 3, runs);
        double tolerance = options.amp() == CompileOptions.Amp.NONE ? 1e-5 : 1e-2;

        Map<String, Object> r = new LinkedHashMap<>();
        r.put("device", "cpu");
        r.put("device_name", Runtime.getRuntime().availableProcessors() + " cores, "
                + jdk.incubator.vector.FloatVector.SPECIES_PREFERRED.vectorBitSize() + "-bit vectors");
        r.put("config", cfg.name());
        r.put("shape", cfg.batch() + "x" + cfg.seq() + "x" + cfg.hidden());
        r.put("dtype", options.amp() == CompileOptions.Amp.NONE ? "f32" : "f32, amp " + options.amp().name().toLowerCase());
        r.put("graph_hash", GraphHash.of(g));
        r.put("ops", g.computeNodes().size());
        r.put("ms", round(m.compiledMs(), 4));
        r.put("rel_err", m.relErr());
        r.put("rel_err_vs_f32", m.relErrVsEager());
        r.put("kernels", m.kernels());
        r.put("fusion_coverage", round(m.fusionCoverage(), 4));
        r.put("eager_ms", round(m.eagerMs(), 4));
        r.put("compiled_ms", round(m.compiledMs(), 4));
        r.put("speedup", round(m.speedup(), 3));
        r.put("planned_peak_bytes", m.plannedPeakBytes());
        r.put("lower_bound_bytes", m.lowerBoundBytes());
        r.put("naive_bytes", m.naiveBytes());
        r.put("cache_key", m.cacheKey());
        r.put("seed", seed);
        String ortLine = DemoPeer.figure(a.get("onnx", null), model, cfg, options, seed, runs, m.compiledMs(), r);
        if (a.flag("json")) {
            out.println(Json.write(r));
        } else {
            printTable(out, r);
            out.println(ortLine);
        }
        if (!(Double.isFinite(m.relErr()) && m.relErr() <= tolerance)) {
            err.printf("lantern demo: relative error %.3e is over the tolerance %.0e%n", m.relErr(), tolerance);
            return 1;
        }
        return 0;
    }

    /** Why the GPU path cannot run here (no GPU, or a library it needs is missing), or {@code null} when it can. */
    private static String gpuMissing() {
        if (CudaDevice.count() == 0) {
            return "no NVIDIA GPU or driver found";
        }
        for (LibraryProbe p : CudaLibraries.system().probes()) {
            if (!p.found() && (p.label().equals("nvrtc") || p.label().equals("cublasLt"))) {
                return p.label() + " not found";
            }
        }
        return null;
    }

    /** The block in bf16 on GPU 0: compiled, replayed as a CUDA graph, and eager, checked against a reference. */
    private static int runOnGpu(Args a, BlockConfig cfg, long seed, int runs, PrintStream out, PrintStream err) {
        if (!a.get("amp", "bf16").equals("bf16")) {
            throw new UsageException("demo: on the GPU the block runs in bf16 (f32 accumulation); --amp takes only bf16 there");
        }
        Graph g = TransformerBlock.build(cfg, DType.BF16).graph();
        CudaDemo.Result m = CudaDemo.measure(cfg, seed, runs);
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("device", "cuda");
        r.put("device_name", m.device());
        r.put("config", cfg.name());
        r.put("shape", cfg.batch() + "x" + cfg.seq() + "x" + cfg.hidden());
        r.put("dtype", "bf16 (f32 accumulation)");
        r.put("graph_hash", GraphHash.of(g));
        r.put("ops", g.computeNodes().size());
        r.put("ms", round(m.graphMs(), 4));
        r.put("rel_err", m.relErr());
        r.put("rel_err_against", m.relErrAgainst());
        r.put("kernels", m.kernels());
        r.put("eager_kernels", m.eagerKernels());
        r.put("compiled_ms", round(m.compiledMs(), 4));
        r.put("graph_ms", round(m.graphMs(), 4));
        r.put("eager_ms", round(m.eagerMs(), 4));
        r.put("speedup", round(m.speedup(), 3));
        r.put("graph_speedup", round(m.graphSpeedup(), 3));
        r.put("graph_hit_pct", m.graphHitPct());
        r.put("peak_bytes", m.peakBytes());
        r.put("eager_peak_bytes", m.eagerPeakBytes());
        r.put("seed", seed);
        if (a.flag("json")) {
            out.println(Json.write(r));
        } else {
            out.printf("device       cuda (%s)%n", r.get("device_name"));
            out.printf("config       %s (%s), %s%n", r.get("config"), r.get("shape"), r.get("dtype"));
            out.printf("graph hash   %s%n", r.get("graph_hash"));
            out.printf("ops          %s%n", r.get("ops"));
            out.printf("kernels      %d (eager: %d)%n", m.kernels(), m.eagerKernels());
            out.printf("ms           %.4f median per forward, compiled + CUDA graph (compiled %.4f, eager %.4f; %.2fx over eager)%n",
                    m.graphMs(), m.compiledMs(), m.eagerMs(), m.graphSpeedup());
            out.printf("graph hits   %.1f%%%n", m.graphHitPct());
            out.printf("memory       peak %,d bytes (eager %,d)%n", m.peakBytes(), m.eagerPeakBytes());
            out.printf("rel_err      %.3e (against the %s reference)%n", m.relErr(), m.relErrAgainst());
        }
        double tolerance = 2e-2;
        if (!(Double.isFinite(m.relErr()) && m.relErr() <= tolerance)) {
            err.printf("lantern demo: relative error %.3e is over the tolerance %.0e%n", m.relErr(), tolerance);
            return 1;
        }
        return 0;
    }

    /** Above this many FLOPs per forward the CPU demo asks for --force (the float64 reference is ~50x slower). */
    private static final double CPU_FLOP_LIMIT = 20e9;

    static double round(double x, int digits) {
        double p = Math.pow(10, digits);
        return Math.round(x * p) / p;
    }

    private static void printTable(PrintStream out, Map<String, Object> r) {
        out.printf("device       %s (%s)%n", r.get("device"), r.get("device_name"));
        out.printf("config       %s (%s), %s%n", r.get("config"), r.get("shape"), r.get("dtype"));
        out.printf("graph hash   %s%n", r.get("graph_hash"));
        out.printf("ops          %s%n", r.get("ops"));
        out.printf("kernels      %s (fusion coverage %.2f)%n", r.get("kernels"), (double) r.get("fusion_coverage"));
        out.printf("ms           %.3f median per forward, compiled (eager %.3f, speedup %.2fx)%n",
                (double) r.get("ms"), (double) r.get("eager_ms"), (double) r.get("speedup"));
        out.printf("memory       planned peak %,d bytes (lower bound %,d, naive %,d)%n",
                (long) r.get("planned_peak_bytes"), (long) r.get("lower_bound_bytes"), (long) r.get("naive_bytes"));
        out.printf("rel_err      %.3e (||out - ref|| / ||ref||, float64 reference)%n", (double) r.get("rel_err"));
    }
}
