package dev.lantern.cli.cuda;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaModule;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.engine.CudaSession;
import dev.lantern.cuda.engine.EventTiming;
import dev.lantern.cuda.engine.KernelFigures;
import dev.lantern.cuda.engine.TuneCache;
import dev.lantern.cuda.nvrtc.KernelSource;
import dev.lantern.cuda.nvrtc.ModuleCache;
import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.engine.Feeds;
import dev.lantern.frontend.Model;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.reference.Accuracy;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.runtime.GraphPolicy;
import dev.lantern.tensor.Tensor;
import dev.lantern.trace.Span;
import dev.lantern.trace.Tracing;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;

/**
 * {@code lantern bench micro|macro} on a GPU: one JSON line per figure in torch_ref.py's record
 * form ({@code case}, {@code impl}, {@code ms}, {@code tflops} or {@code gbps}, {@code peak_mib})
 * with torch_ref.py's case names, so both land in one results file side by side.
 *
 * <p>Times are medians of CUDA-event timings after warm-up, on seeded random data (never
 * zeros). The micro benchmarks are {@link MicroBench}: their inputs rotate among sets whose total
 * is above the 60 MB L2; the big GEMMs, norms and attention try their variants (tiles, cuBLASLt
 * candidates; cached in the {@link TuneCache}) and report the winner timed again apart from the
 * choice. This class holds the macro blocks and the record format both write.
 */
public final class CudaBench {
    private final CudaDevice device;
    private final Consumer<String> emit;
    private final Consumer<String> progress;
    private final TuneCache tune;
    private boolean deterministic;
    private volatile String traceLabel = "timed run";
    private dev.lantern.metrics.LanternMetrics metrics;

    /**
     * Untimed forwards before each mode's timing, compiled, graph replay and eager alike (the demo
     * uses it too): the first forwards pay cuMemAlloc calls and first launches, eager most.
     */
    public static final int WARMUP = 10;

    public CudaBench(CudaDevice device, Consumer<String> emit, Consumer<String> progress, TuneCache tune) {
        this.device = device;
        this.emit = emit;
        // the last progress line names the case being timed: what a traced micro benchmark calls its slices
        this.progress = m -> {
            traceLabel = m;
            progress.accept(m);
        };
        this.tune = tune;
    }

    /** Strict determinism mode for the blocks and models benchmarked from now on (its cost is what bench measures then). */
    public CudaBench deterministic(boolean on) {
        this.deterministic = on;
        return this;
    }

    /**
     * Records each macro block's or model's compiled forward (step_time_ms, tokens_per_s), its kernel figures (occ_pct,
     * dram_gbps) and its graph session's graph_hit_pct.
     */
    public CudaBench metrics(dev.lantern.metrics.LanternMetrics m) {
        this.metrics = m;
        return this;
    }

    boolean deterministic() {
        return deterministic;
    }

    /**
     * The summary of a profiled forward's kernel figures (what the JSON calls {@code occ_pct} and {@code dram_gbps}),
     * recorded into {@code metrics} unless null: bench macro and bench model both report through here.
     */
    static KernelFigures.Summary summarize(List<KernelFigures.Figure> figures, dev.lantern.metrics.LanternMetrics metrics) {
        KernelFigures.Summary summary = KernelFigures.summary(figures);
        if (metrics != null) {
            metrics.kernelFigures(summary.occPct(), summary.dramGbps());
        }
        return summary;
    }

    /** The metrics to record into, or null when the command has none. */
    dev.lantern.metrics.LanternMetrics metrics() {
        return metrics;
    }

    /** {@code graph} compiled for cuda (fused for a compiled session) in this bench's determinism mode, opened. */
    private CudaSession open(dev.lantern.ir.Graph graph, Map<String, Tensor> params, CudaSession.Options options) {
        dev.lantern.engine.CompileOptions co = dev.lantern.engine.CompileOptions.defaults().withTarget("cuda")
                .withFuse(options.mode() == CudaSession.Mode.COMPILED).withDeterministic(deterministic);
        return CudaSession.open(device, dev.lantern.engine.Compiler.compile(graph, co), params, options);
    }

    // ------------------------------------------------------------------ macro

    /** torch_ref.py's FLOP count of one block forward. */
    public static double blockFlops(BlockConfig c) {
        double bs = (double) c.batch() * c.seq();
        return 2 * bs * (4.0 * c.hidden() * c.hidden() + 2.0 * c.hidden() * c.mlp())
                + 4 * bs * c.seq() * c.hidden() * (c.decoder() ? 0.5 : 1.0);
    }

    /**
     * Compiled, compiled + graph replay and eager runs of one benchmark block. The sessions are
     * open at once and timed in alternating rounds (big blocks: 3), each figure the median of its
     * rounds' medians, each mode after the same {@link #WARMUP}: a big block holds the GPU at its
     * power limit and its clock drifts as it warms, so timing one mode after the other would
     * favour whichever ran first. Graph replay has a session of its own, opened after the
     * compiled one is tuned (it takes the same cached choices), that only ever replays: its
     * graph_hit_pct counts every forward it ran, and its output is checked against the compiled
     * session's after its buffers were poisoned, so a replay that wrote nothing cannot pass.
     */
    public void macro(BlockConfig cfg, long seed) {
        Model model = TransformerBlock.build(cfg, DType.BF16);
        boolean big = (long) cfg.batch() * cfg.seq() > 4096;
        int iters = big ? 30 : 200;
        int rounds = big ? 3 : 1;
        double flops = blockFlops(cfg);
        // small blocks: host parameters, so a float64 reference can check the result
        Map<String, Tensor> params = big ? null : model.parameters(seed);
        Map<String, Tensor> inputs = big ? null : Feeds.inputs(model.graph(), seed);
        Map<String, Object> common = new LinkedHashMap<>();
        progress.accept("macro " + cfg.name() + ": compiling");
        try (CudaSession s = open(model.graph(), params, CudaSession.Options.compiled().withAutotune(tune));
             CudaSession e = open(model.graph(), params, CudaSession.Options.eager())) {
            setInputs(s, inputs, seed);
            setInputs(e, inputs, seed);
            progress.accept("macro " + cfg.name() + ": autotuning");
            s.autotune();
            try (CudaSession gs = open(model.graph(), params,
                    CudaSession.Options.compiled().withPolicy(GraphPolicy.PREFER).withAutotune(tune))) {
                setInputs(gs, inputs, seed);
                double[] compiled = new double[rounds];
                double[] graph = new double[rounds];
                double[] eager = new double[rounds];
                List<CudaSession.StepTime> inForward;
                List<CudaSession.StepTime> alone;
                List<CudaSession.StepTime> eagerSteps; // for the gate: how much of eager's time its GEMMs take
                // untraced: a traced forward synchronises after every forward, which the figures must not include
                try (Tracing.Installed untraced = Tracing.suspend()) {
                    for (int r = 0; r < rounds; r++) {
                        progress.accept("macro " + cfg.name() + ": timing compiled, graph replay, eager (round " + (r + 1) + "/" + rounds + ")");
                        compiled[r] = s.timeMs(s::forward, WARMUP, iters);
                        graph[r] = gs.timeMs(gs::forwardGraph, WARMUP, iters);
                        eager[r] = e.timeMs(e::forward, WARMUP, iters);
                    }
                    progress.accept("macro " + cfg.name() + ": profiling steps");
                    inForward = s.profileInForward(3, iters);
                    alone = s.profile(3, big ? 10 : 50);
                    eagerSteps = e.profileEager(3, big ? 10 : 50);
                }
                traceForwards(cfg.name(), s, gs, e);
                s.poison();
                s.forward();
                Tensor compiledOut = s.output();
                common.put("kernels", s.model().kernels().size());
                common.put("device_ops", s.deviceOps());
                common.put("fusion_coverage", round(s.model().fusionCoverage(), 4));
                Map<String, Object> withSteps = new LinkedHashMap<>(common);
                withSteps.put("steps", stepsJson(inForward));
                withSteps.put("steps_alone", stepsJson(alone));
                // occupancy from the occupancy API and launch shapes; GB/s = cost-model bytes / the in-forward step times
                List<KernelFigures.Figure> figures = s.kernelFigures(inForward);
                KernelFigures.Summary summary = summarize(figures, metrics);
                withSteps.put("occ_pct", KernelFiguresJson.number(summary.occPct(), 2));
                withSteps.put("dram_gbps", KernelFiguresJson.number(summary.dramGbps(), 1));
                withSteps.put("kernel_figures", KernelFiguresJson.of(figures));
                double ms = EventTiming.median(compiled);
                record(cfg.name(), "lantern", ms, "tflops", flops / ms / 1e9, s.peakBytes(), withSteps);
                if (metrics != null) {
                    metrics.recordStep(ms, (long) cfg.batch() * cfg.seq()); // one forward: batch x seq tokens
                }

                gs.poison(); // the arena holds the last replay's output: NaN it, so the check sees this replay
                gs.forwardGraph();
                Tensor graphOut = gs.output();
                Map<String, Object> g = new LinkedHashMap<>(common);
                g.put("graph_hit_pct", round(gs.forwardStats().graphHitPct(), 2));
                g.put("forwards", gs.forwardStats().forwards());
                g.put("rel_err_vs_compiled", sci(Accuracy.relErr(graphOut.toDoubles(), compiledOut.toDoubles())));
                double gms = EventTiming.median(graph);
                record(cfg.name(), "lantern-graph", gms, "tflops", flops / gms / 1e9, gs.peakBytes(), g);
                if (metrics != null) {
                    metrics.session(new dev.lantern.SessionStats(gs.forwardStats().forwards(), gs.forwardStats().replays(),
                            java.util.Map.of()));
                }

                e.poison();
                e.forward();
                Tensor eagerOut = e.output();
                Map<String, Object> x = new LinkedHashMap<>();
                x.put("kernels", e.model().kernels().size());
                x.put("device_ops", e.deviceOps());
                x.put("rel_err_vs_compiled", sci(Accuracy.relErr(eagerOut.toDoubles(), compiledOut.toDoubles())));
                x.put("steps", stepsJson(eagerSteps));
                if (!big && blockFlops(cfg) <= CudaDemo.REFERENCE_MAX_FLOPS) {
                    progress.accept("macro " + cfg.name() + ": float64 reference");
                    Map<String, Tensor> all = new LinkedHashMap<>(params);
                    all.putAll(inputs);
                    double[] ref = ReferenceInterpreter.run(model.graph(), all).get(model.graph().outputs().getFirst()).data();
                    x.put("rel_err_vs_f64", sci(Accuracy.relErr(eagerOut.toDoubles(), ref)));
                    x.put("compiled_rel_err_vs_f64", sci(Accuracy.relErr(compiledOut.toDoubles(), ref)));
                }
                double ems = EventTiming.median(eager);
                record(cfg.name(), "lantern-eager", ems, "tflops", flops / ems / 1e9, e.peakBytes(), x);
            }
        }
    }

    /**
     * The block fed through an input pipeline, uploads beside the forwards and then on their stream
     * ({@link PipelineBench}): the memcpy/compute overlap from CUDA events. After {@link #macro}, whose
     * tuning it reuses.
     */
    public void pipeline(BlockConfig cfg, long seed) {
        try (Tracing.Installed untraced = Tracing.suspend()) {
            PipelineBench.run(this, device, tune, cfg, seed, progress);
        }
    }

    /** Forwards traced per step after the timings (--trace): compiled, graph replay and eager, each as its own span. */
    private static void traceForwards(String name, CudaSession compiled, CudaSession graph, CudaSession eager) {
        if (!Tracing.enabled()) {
            return;
        }
        for (int i = 0; i < TRACED_FORWARDS; i++) {
            try (Span span = Tracing.span(name + " compiled forward", "step")) {
                compiled.forward();
            }
        }
        for (int i = 0; i < TRACED_FORWARDS; i++) {
            try (Span span = Tracing.span(name + " graph forward", "step")) {
                graph.forwardGraph();
            }
        }
        for (int i = 0; i < TRACED_FORWARDS; i++) {
            try (Span span = Tracing.span(name + " eager forward", "step")) {
                eager.forward();
            }
        }
    }

    /** Forwards of each mode that a traced bench macro records, after its untraced timings. */
    static final int TRACED_FORWARDS = 3;

    private static void setInputs(CudaSession s, Map<String, Tensor> inputs, long seed) {
        if (inputs == null) {
            s.fillInputs(seed);
        } else {
            s.setInputs(inputs);
        }
    }

    // ------------------------------------------------------------------ micro

    /** The micro benchmarks ({@link MicroBench}): GEMMs, row ops, rope, attention. */
    public void micro() {
        new MicroBench(this, device, progress, tune).run();
    }

    // ------------------------------------------------------------------ helpers

    private final Map<String, CudaModule.CudaKernel> loaded = new LinkedHashMap<>();

    CudaModule.CudaKernel load(CudaKernelSource src) {
        return loaded.computeIfAbsent(src.entry(), e -> {
            CudaModule m = ModuleCache.forDevice(device).load(device, new KernelSource(src.entry(), src.source(), List.of(), src.variant(), src.archSpecific()));
            CudaModule.CudaKernel k = m.kernel(src.entry());
            if (src.launch().needsSharedOptIn()) {
                k.setMaxDynamicSharedBytes(src.launch().dynamicSharedBytes());
            }
            return k;
        });
    }

    /**
     * A generated kernel's launch shape and theoretical occupancy ({@code cuOccupancyMaxActiveBlocksPerMultiprocessor}
     * for its block and dynamic shared memory, against the SM's thread slots) as record fields.
     */
    Map<String, Object> launchFigures(CudaModule.CudaKernel k, dev.lantern.cuda.codegen.LaunchConfig c) {
        int perSm = k.maxActiveBlocksPerSm(c.threads(), c.dynamicSharedBytes());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("grid", json("[" + c.gridX() + ", " + c.gridY() + ", " + c.gridZ() + "]"));
        m.put("block", json("[" + c.blockX() + ", " + c.blockY() + ", " + c.blockZ() + "]"));
        m.put("shared_bytes", c.dynamicSharedBytes());
        m.put("blocks_per_sm", perSm);
        m.put("occupancy_pct", KernelFiguresJson.number(KernelFigures.occupancyPct(perSm, c.threads(), device.maxThreadsPerSm()), 2));
        return m;
    }

    private static Object json(String literal) {
        return new Object() {
            @Override
            public String toString() {
                return literal;
            }
        };
    }

    double time(CudaStream s, Runnable work, int warm, int iters) {
        return EventTiming.medianMs(device, s, work, warm, iters, traceLabel);
    }

    /** The tune cache the sessions share. */
    TuneCache tune() {
        return tune;
    }

    void record(String name, String impl, double ms, String rateKey, double rate, long peakBytes, Map<String, Object> extra) {
        StringBuilder b = new StringBuilder();
        b.append("{\"case\": \"").append(name).append("\", \"impl\": \"").append(impl).append("\", ");
        b.append(String.format(Locale.ROOT, "\"ms\": %.4f, \"%s\": %.1f, \"peak_mib\": %d", ms, rateKey, rate,
                Math.round(peakBytes / 1048576.0)));
        if (deterministic) {
            b.append(", \"deterministic\": true");
        }
        for (Map.Entry<String, Object> e : extra.entrySet()) {
            Object v = e.getValue();
            b.append(", \"").append(e.getKey()).append("\": ")
                    .append(v instanceof String str ? "\"" + str + "\"" : String.valueOf(v));
        }
        emit.accept(b.append('}').toString());
    }

    /** [{"op": ..., "ms": ...}, ...] as a JSON value (printed as is by {@link #record}). */
    static Object stepsJson(List<CudaSession.StepTime> steps) {
        StringBuilder b = new StringBuilder("[");
        for (CudaSession.StepTime t : steps) {
            b.append(b.length() > 1 ? ", " : "").append("{\"op\": \"").append(t.op()).append("\", \"ms\": ")
                    .append(String.format(Locale.ROOT, "%.4f", t.ms())).append('}');
        }
        String json = b.append(']').toString();
        return new Object() {
            @Override
            public String toString() {
                return json;
            }
        };
    }

    /** Timing of a Hugging Face folder's prefill ({@link ModelBench}). */
    public void model(java.nio.file.Path dir, int batch, int seq, long seed) {
        ModelBench.run(this, device, dir, batch, seq, seed, progress);
    }

    static double round(double v, int digits) {
        double p = Math.pow(10, digits);
        return Math.round(v * p) / p;
    }

    /** A double as JSON with 3 significant digits in e-notation (as a number, not a string). */
    private static Object sci(double v) {
        return new Object() {
            @Override
            public String toString() {
                return Double.isFinite(v) ? String.format(Locale.ROOT, "%.3e", v) : "null";
            }
        };
    }
}
