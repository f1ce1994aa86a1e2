package dev.lantern.cuda.engine;

import dev.lantern.cuda.blas.CublasLtGemm;
import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.driver.GraphRunner;
import dev.lantern.cuda.lower.CudaLowering;
import dev.lantern.cuda.lower.Step;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.ir.Graph;
import dev.lantern.runtime.GraphPolicy;
import dev.lantern.tensor.Tensor;
import dev.lantern.trace.RuntimeCounters;
import java.util.List;
import java.util.Map;

/**
 * A model compiled for one GPU and ready to run: the {@link CudaCompiler} makes the program once
 * (lowering, NVRTC through the module cache, cuBLASLt plans), the {@link CudaExecutor} holds its
 * buffers and runs it on one stream, the {@link Autotuner} times variants through the executor.
 * This class ties the three together for callers: demo, bench, tests and the public
 * {@code Session} ({@link CudaProgramSession}).
 *
 * <p>{@link Mode#COMPILED}: the fused kernels out of ONE arena sized by the memory plan, every
 * launch's arguments bound once, so the forward can be captured into a CUDA graph
 * ({@link #forwardGraph}) and replayed. {@link Mode#EAGER}: the graph compiled without fusion,
 * one kernel per primitive op, each op's output allocated from the caching allocator just before
 * it runs and freed after its last reader (PyTorch eager's memory behaviour): the baseline of the
 * Phase 1 plan's 20 % gate.
 *
 * <pre>
 * try (CudaSession s = CudaSession.open(device, graph, params, CudaSession.Options.compiled())) {
 *     s.setInputs(inputs);                     // x: bf16[16,1024,4096]
 *     s.forward();                             // or s.forwardGraph()
 *     Tensor y = s.output();
 * }
 * </pre>
 */
public final class CudaSession implements AutoCloseable {
    public enum Mode { COMPILED, EAGER }

    /**
     * @param policy   graph policy of {@link #forwardGraph} (eager sessions never capture)
     * @param autotune time tile variants and cuBLASLt candidates once, cache the winners in {@code tune}
     */
    public record Options(Mode mode, GraphPolicy policy, boolean autotune, TuneCache tune) {
        public static Options compiled() {
            return new Options(Mode.COMPILED, GraphPolicy.PREFER, false, TuneCache.none());
        }

        public static Options eager() {
            return new Options(Mode.EAGER, GraphPolicy.OFF, false, TuneCache.none());
        }

        public Options withAutotune(TuneCache cache) {
            return new Options(mode, policy, true, cache);
        }

        public Options withPolicy(GraphPolicy p) {
            return new Options(mode, p, autotune, tune);
        }
    }

    /** The cuBLASLt workspace every GEMM step of a session gets (32 MiB). */
    public static final long WORKSPACE_BYTES = GemmPlans.WORKSPACE_BYTES;

    private final CudaDevice device;
    private final Options options;
    private final CompiledModel model;
    private final CudaCompiler compiler;
    private final CudaExecutor executor;

    private CudaSession(CudaDevice device, CompiledModel model, Map<String, Tensor> params, Options options) {
        if (!model.options().target().equals("cuda") || model.options().fuse() != (options.mode() == Mode.COMPILED)) {
            throw new IllegalArgumentException("a " + options.mode() + " session runs a model compiled for cuda with fuse="
                    + (options.mode() == Mode.COMPILED) + ", given " + model.options());
        }
        this.device = device;
        this.options = options;
        this.model = model;
        this.compiler = new CudaCompiler(device, CudaTargets.of(device), model.options().choices().gemmCandidates(),
                model.options().deterministic());
        CudaExecutor ex = null;
        try {
            Autotuner cached = tuner(null);
            CudaProgram program = compiler.compile(model, cached::targetFor, cached::splitGelu);
            ex = new CudaExecutor(device, program, options.mode() == Mode.COMPILED, options.policy(), params);
            cached.applyCachedGemms(program.lowered(), ex, ex.gemmChoice());
            ex.use(program);
        } catch (RuntimeException e) {
            if (ex != null) {
                ex.close();
            }
            compiler.close();
            throw e;
        }
        this.executor = ex;
    }

    /** Compiles {@code graph} with the default options for cuda (fused for a compiled session) and opens it. */
    public static CudaSession open(CudaDevice device, Graph graph, Map<String, Tensor> params, Options options) {
        CompileOptions co = CompileOptions.defaults().withTarget("cuda").withFuse(options.mode() == Mode.COMPILED);
        return new CudaSession(device, Compiler.compile(graph, co), params, options);
    }

    /**
     * Loads {@code model} (compiled for cuda; fused for a compiled session, unfused for an eager
     * one) on {@code device} and uploads {@code params} (by parameter name; {@code null}: drawn on
     * the device).
     */
    public static CudaSession open(CudaDevice device, CompiledModel model, Map<String, Tensor> params, Options options) {
        return new CudaSession(device, model, params, options);
    }

    /** The autotuner over the options' tune cache, timing on the executor's stream ({@code null} before it exists). */
    private Autotuner tuner(CudaExecutor ex) {
        KernelTimer timer = ex != null ? ex : new KernelTimer() {
            @Override
            public double medianMs(Runnable work, int warm, int iters) {
                throw new IllegalStateException("no executor to time on yet");
            }

            @Override
            public double sustainedMs(Runnable work, double warmMs, int iters) {
                throw new IllegalStateException("no executor to time on yet");
            }
        };
        return new Autotuner(timer, options.tune(), device.target().name(), compiler.target(),
                model.options().choices().gemmCandidates(), model.options().deterministic());
    }

    // ------------------------------------------------------------------ running

    /** Graph inputs drawn on the device, uniform in [-√3, √3) (unit variance), from {@code seed}. */
    public void fillInputs(long seed) {
        executor.fillInputs(seed);
    }

    /** Uploads the graph inputs, by input name. */
    public void setInputs(Map<String, Tensor> inputs) {
        executor.setInputs(inputs);
    }

    /** Uploads some of the graph inputs, by input name (the others keep what they hold). */
    public void setSomeInputs(Map<String, Tensor> inputs) {
        executor.setInputs(inputs, false);
    }

    /**
     * The device address of {@code value} (an input's node name, or any value of the compiled
     * graph the last forward left readable: its outputs), valid until the session closes (compiled)
     * or the next forward (eager).
     */
    public long addressOf(String value) {
        return executor.addressOf(value);
    }

    /**
     * Enqueues one forward on the session's stream (kernel by kernel, no graph; no synchronisation).
     * Counted in {@link #forwardStats} as a forward that did not replay a graph.
     */
    public void forward() {
        executor.forward();
        RuntimeCounters.launched(deviceOps()); // kernel_launches_total: one per step, cuBLASLt calls included
    }

    /**
     * One forward through the graph runner: captured on the first call, replayed after (policy
     * permitting). An eager session has no graph: its forwards are plain forwards.
     */
    public void forwardGraph() {
        executor.forwardGraph();
        RuntimeCounters.launched(deviceOps()); // a replay runs every step's kernel: counted as launched
    }

    /** One forward's steps, uncounted. */
    void runSteps() {
        executor.runSteps();
    }

    /** Every forward the caller asked for, by how it ran: graph_hit_pct over the whole session. */
    public ForwardStats forwardStats() {
        return executor.forwardStats();
    }

    /** Fills the planned buffers with NaN bytes so that an element no kernel writes shows (tests). */
    public void poison() {
        executor.poison();
    }

    /**
     * Compiled sessions: runs the steps of kernels 0..{@code kernel} and returns that kernel's
     * output (later kernels have not overwritten it yet): a per-kernel check against the
     * reference interpreter on the compiled graph.
     */
    public Tensor runUntil(int kernel) {
        requireCompiled("runUntil");
        return executor.runUntil(kernel);
    }

    public void synchronize() {
        executor.stream().synchronize();
    }

    /** The first graph output, downloaded (synchronises the stream). */
    public Tensor output() {
        return output(model.graph().outputs().getFirst());
    }

    public Tensor output(String value) {
        return executor.output(value);
    }

    // ------------------------------------------------------------------ timing and profiling

    /** One step of the compiled forward and its device time. */
    public record StepTime(String op, double ms) {}

    /** Every step of the compiled forward timed alone ({@link StepProfiler#alone}). */
    public List<StepTime> profile(int warm, int iters) {
        requireCompiled("profile");
        return StepProfiler.alone(executor, executor.program().steps(), executor.bound(), warm, iters);
    }

    /** The compiled forward's steps timed inside whole forwards ({@link StepProfiler#inForward}). */
    public List<StepTime> profileInForward(int warm, int iters) {
        requireCompiled("profile");
        return StepProfiler.inForward(executor, executor.program().steps(), executor.bound(), warm, iters);
    }

    /** An eager session's steps timed inside whole eager forwards ({@link StepProfiler#eager}). */
    public List<StepTime> profileEager(int warm, int iters) {
        if (options.mode() != Mode.EAGER) {
            throw new IllegalStateException("profileEager needs an eager session");
        }
        return StepProfiler.eager(executor, executor.program().steps(), warm, iters);
    }

    /**
     * {@link KernelFigures} of this compiled session's steps timed as {@code inForward} (from
     * {@link #profileInForward}): launch shapes, occupancy from the occupancy API, DRAM GB/s.
     */
    public List<KernelFigures.Figure> kernelFigures(List<StepTime> inForward) {
        requireCompiled("kernel figures");
        CudaProgram p = executor.program();
        return KernelFigures.of(p.steps(), p.model().kernels(), inForward,
                l -> p.kernel(l.source()).maxActiveBlocksPerSm(l.source().launch().threads(), l.source().launch().dynamicSharedBytes()),
                device.maxThreadsPerSm(), device.target().smCount());
    }

    private void requireCompiled(String what) {
        if (options.mode() != Mode.COMPILED) {
            throw new IllegalStateException(what + " needs a compiled session");
        }
    }

    public double timeMs(Runnable work, int warm, int iters) {
        return executor.medianMs(work, warm, iters);
    }

    /** Median ms of {@code work} under sustained load ({@link EventTiming#sustainedMedianMs}). */
    public double sustainedMs(Runnable work, double warmMs, int iters) {
        return executor.sustainedMs(work, warmMs, iters);
    }

    /** Runs the autotuner (after one forward so every buffer holds real data) and compiles again if a choice changed. */
    public void autotune() {
        if (options.mode() != Mode.COMPILED) {
            return;
        }
        executor.runSteps();
        executor.stream().synchronize();
        Autotuner tuner = tuner(executor);
        CudaProgram program = executor.program();
        boolean changed = tuner.tuneGemms(program.lowered(), executor, executor.gemmChoice());
        changed |= tuner.tuneKernels(program.lowered(), executor);
        options.tune().save();
        if (changed) {
            program = compiler.compile(model, tuner::targetFor, tuner::splitGelu);
            tuner.applyCachedGemms(program.lowered(), executor, executor.gemmChoice());
        }
        executor.use(program);
    }

    // ------------------------------------------------------------------ probes (tests)

    /** Sets one GEMM's cuBLASLt candidate and binds the forward again (probes). */
    void chooseGemm(Step.GemmUse use, int candidate) {
        executor.chooseGemm(use, candidate);
    }

    CublasLtGemm gemm(GemmSpec spec) {
        return executor.program().gemm(spec);
    }

    Runnable bind(Step s) {
        return executor.bind(s);
    }

    int gemmCandidates() {
        return model.options().choices().gemmCandidates();
    }

    // ------------------------------------------------------------------ figures

    public CompiledModel model() {
        return model;
    }

    public CudaLowering.Lowered lowered() {
        return executor.program().lowered();
    }

    /** The target the program was rendered for (before tuned choices). */
    public CudaTarget target() {
        return compiler.target();
    }

    public CudaDevice device() {
        return device;
    }

    public CudaStream stream() {
        return executor.stream();
    }

    /** Why the last CUDA graph capture failed, or {@code null}. */
    public String graphFailure() {
        return executor.graphFailure();
    }

    /** The graph runner's counters: forwardGraph calls only; {@link #forwardStats} counts every forward. */
    public GraphRunner.Stats graphStats() {
        return executor.graphStats();
    }

    /** Kernel launches + GEMMs of one forward. */
    public int deviceOps() {
        return executor.program().steps().size();
    }

    /** The most bytes held from the allocator at once: params, inputs, arena, scratch, workspace, activations. */
    public long peakBytes() {
        return executor.peakBytes();
    }

    public Map<Step.GemmUse, Integer> gemmChoices() {
        return Map.copyOf(executor.gemmChoice());
    }

    /**
     * Waits for the stream, then releases everything. After a context loss it releases quietly
     * (the device memory, modules and graphs went with the context) and throws nothing: the loss
     * was or will be reported by the call that runs into it.
     */
    @Override
    public void close() {
        try {
            executor.close();
        } finally {
            compiler.close();
        }
    }
}
