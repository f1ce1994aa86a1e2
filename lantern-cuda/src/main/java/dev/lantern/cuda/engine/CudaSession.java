package dev.lantern.cuda.engine;

import dev.lantern.cuda.blas.CublasLtGemm;
import dev.lantern.cuda.blas.CublasLtHandle;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaModule;
import dev.lantern.cuda.driver.CudaSegmentSource;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.driver.GraphRunner;
import dev.lantern.cuda.lower.Buf;
import dev.lantern.cuda.lower.CudaLowering;
import dev.lantern.cuda.lower.LaunchContract;
import dev.lantern.cuda.lower.Step;
import dev.lantern.cuda.nvrtc.KernelSource;
import dev.lantern.cuda.nvrtc.ModuleCache;
import dev.lantern.cuda.driver.StreamTailSync;
import dev.lantern.cuda.ffi.CudaContextLostException;
import dev.lantern.cuda.codegen.CodegenException;
import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.codegen.LaunchConfig;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.TensorType;
import dev.lantern.kernel.Kernel;
import dev.lantern.plan.MemoryPlan;
import dev.lantern.runtime.GraphPolicy;
import dev.lantern.runtime.alloc.Allocation;
import dev.lantern.runtime.alloc.AllocatorConfig;
import dev.lantern.runtime.alloc.CachingAllocator;
import dev.lantern.tensor.Tensor;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.IntFunction;

/**
 * A model compiled for one GPU and ready to run: compiled once (passes, lowering, NVRTC through
 * the {@link ModuleCache}, cuBLASLt plans), parameters uploaded once, all on one stream.
 *
 * <p>{@link Mode#COMPILED}: the fused kernels out of ONE arena sized by the memory plan (one
 * block of the caching allocator), every launch's arguments bound once, so the forward can be
 * captured into a CUDA graph ({@link #forwardGraph}) and replayed. {@link Mode#EAGER}: the graph
 * compiled without fusion, one kernel per primitive op, each op's output allocated from the
 * caching allocator just before it runs and freed after its last reader (PyTorch eager's
 * memory behaviour): the baseline of the Phase 1 plan's 20 % gate.
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

    static final long WORKSPACE_BYTES = 32L << 20;

    private final CudaDevice device;
    private final Options options;
    private final CudaTarget target;
    private final CudaStream stream;
    private final CudaSegmentSource source;
    private final CachingAllocator alloc;
    private final CompiledModel model;
    private final MemoryPlan plan;
    private final Map<String, MemoryPlan.Placement> placements;
    private final Map<String, Allocation> values = new HashMap<>(); // inputs, params, eager activations
    private final Map<String, Allocation> scratch = new HashMap<>();
    private final Set<String> persistent = new HashSet<>();
    private final Map<String, CudaModule.CudaKernel> kernels = new HashMap<>();
    private final List<CudaModule> loadedModules = new ArrayList<>();
    private final Map<GemmSpec, CublasLtGemm> gemms = new LinkedHashMap<>();
    private final Map<Step.GemmUse, Integer> gemmChoice = new HashMap<>();
    private final CublasLtHandle lt;
    private final ModuleCache modules;
    private final GraphRunner graphs;
    private final long streamId;
    private CudaLowering.Lowered lowered;
    private Allocation arena;
    private Allocation transientArea;
    private Allocation workspace;
    private List<Runnable> bound; // COMPILED: every step with its addresses resolved
    private long peakAllocated;
    // names a step for a context-loss report: formatted only then (CudaDevice.step)
    private final IntFunction<String> stepNames = i -> "#" + i + " " + StepProfiler.describe(lowered.steps().get(i));

    private CudaSession(CudaDevice device, CompiledModel model, Map<String, Tensor> params, Options options) {
        if (!model.options().target().equals("cuda") || model.options().fuse() != (options.mode() == Mode.COMPILED)) {
            throw new IllegalArgumentException("a " + options.mode() + " session runs a model compiled for cuda with fuse="
                    + (options.mode() == Mode.COMPILED) + ", given " + model.options());
        }
        this.device = device;
        this.options = options;
        this.target = CudaTargets.of(device);
        this.model = model;
        this.plan = model.plan();
        this.placements = plan.byValue();
        this.stream = device.newStream(false);
        this.streamId = stream.handle();
        this.source = new CudaSegmentSource(device);
        // markers that complete only once the stream has drained: the allocator unmaps free
        // tails on the host, and queued kernels may still read a block freed after them
        this.alloc = new CachingAllocator(source, new StreamTailSync().add(stream), AllocatorConfig.defaults());
        this.lt = CublasLtHandle.create(device);
        this.modules = ModuleCache.forDevice(device);
        this.graphs = new GraphRunner(device, options.mode() == Mode.COMPILED ? options.policy() : GraphPolicy.OFF);
        Autotuner tuner = new Autotuner(this, options.tune(), device.target().name(), target);
        this.lowered = CudaLowering.lower(model, target, tuner::targetFor, tuner::splitGelu);
        loadKernels(lowered);
        planGemms(lowered);
        tuner.applyCachedGemms(lowered, gemms, gemmChoice);
        allocateBuffers(params);
        if (options.mode() == Mode.COMPILED) {
            bound = bindAll();
        }
    }

    /**
     * Compiles {@code graph} for {@code device} and uploads {@code params} (by parameter name);
     * with {@code params == null} the parameters are drawn on the device instead.
     */
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

    // ------------------------------------------------------------------ setup

    private void loadKernels(CudaLowering.Lowered l) {
        for (Step s : l.steps()) {
            if (s instanceof Step.Launch launch) {
                load(launch.source());
            }
        }
    }

    CudaModule.CudaKernel load(CudaKernelSource src) {
        CudaModule.CudaKernel k = kernels.get(src.entry());
        if (k == null) {
            CudaModule m = modules.load(device, new KernelSource(src.entry(), src.source(), List.of(), src.variant(), src.archSpecific()));
            loadedModules.add(m);
            k = m.kernel(src.entry());
            LaunchConfig c = src.launch();
            if (c.needsSharedOptIn()) {
                k.setMaxDynamicSharedBytes(c.dynamicSharedBytes());
            }
            kernels.put(src.entry(), k);
        }
        return k;
    }

    private void planGemms(CudaLowering.Lowered l) {
        for (Step s : l.steps()) {
            if (s instanceof Step.Gemm gs && !gemms.containsKey(gs.spec())) {
                gemms.put(gs.spec(), lt.plan(gs.spec(), WORKSPACE_BYTES, gemmCandidates()));
            }
        }
    }

    private final List<Allocation> fixed = new ArrayList<>(); // freed at close

    private Allocation allocateFixed(long bytes) {
        Allocation a = allocate(bytes);
        fixed.add(a);
        return a;
    }

    /** The cuBLASLt plan of {@code spec}, planned on first use (the autotuner's split variants). */
    CublasLtGemm gemmPlan(GemmSpec spec) {
        return gemms.computeIfAbsent(spec, sp -> lt.plan(sp, WORKSPACE_BYTES, gemmCandidates()));
    }

    private Allocation allocate(long bytes) {
        Allocation a = alloc.allocate(Math.max(bytes, 256), streamId);
        peakAllocated = Math.max(peakAllocated, alloc.stats().allocated());
        return a;
    }

    private void allocateBuffers(Map<String, Tensor> params) {
        Graph g = model.graph();
        workspace = allocateFixed(WORKSPACE_BYTES);
        for (Node n : g.params()) {
            String name = n.attrs().getString("name", n.name());
            if (params == null) {
                fillParam(valueBuffer(n), n, name);
                continue;
            }
            Tensor t = params.get(name);
            if (t == null) {
                throw new IllegalArgumentException("no value for parameter '" + name + "' of " + n);
            }
            upload(valueBuffer(n), t, n.type());
        }
        for (Node n : g.inputs()) {
            valueBuffer(n);
        }
        for (Buf b : lowered.scratch()) {
            scratch.put(b.name(), allocateFixed(b.bytes()));
        }
        transientArea = allocateFixed(Math.max(lowered.transientBytes(), 256));
        if (options.mode() == Mode.COMPILED) {
            arena = allocateFixed(Math.max(plan.arenaBytes(), 256));
        }
        stream.synchronize();
    }

    /**
     * Parameters drawn on the device (benchmarks of the big blocks: 400 MB of weights drawn on
     * the host would cost seconds): vectors named {@code *norm*.weight} near 1, other vectors
     * (biases) small, matrices uniform with the std of {@code ParamInit.normal(0.02)}.
     */
    private void fillParam(Allocation a, Node n, String name) {
        if (fill == null) {
            fill = new DeviceFill(device);
        }
        TensorType t = n.type();
        long seed = name.hashCode() * 0x9E3779B97F4A7C15L + 17;
        boolean vector = t.shape().rank() == 1;
        float scale = vector ? (name.contains("norm") ? 0.1f : 0.02f) : 0.02f * (float) Math.sqrt(3);
        float offset = vector && name.contains("norm") && name.endsWith("weight") ? 1f : 0f;
        fill.fill(stream, a.address(), t.shape().numel(), t.dtype(), seed, scale, offset);
    }

    private DeviceFill fill;

    /** Graph inputs drawn on the device, uniform in [-√3, √3) (unit variance), from {@code seed}. */
    public void fillInputs(long seed) {
        if (fill == null) {
            fill = new DeviceFill(device);
        }
        for (Node n : model.graph().inputs()) {
            fill.fill(stream, values.get(n.name()).address(), n.type().shape().numel(), n.type().dtype(),
                    seed * 31 + n.name().hashCode(), (float) Math.sqrt(3));
        }
        stream.synchronize();
    }

    private Allocation valueBuffer(Node n) {
        Allocation a = allocateFixed(n.type().contiguous().bytes());
        values.put(n.name(), a);
        persistent.add(n.name());
        return a;
    }

    private void upload(Allocation dst, Tensor t, TensorType type) {
        if (t.dtype() != type.dtype() || !t.shape().equals(type.shape())) {
            throw new IllegalArgumentException("tensor " + t.dtype() + t.shape() + " does not match " + type);
        }
        long bytes = type.contiguous().bytes();
        try (CudaStorage pinned = device.allocatePinned(bytes)) {
            MemorySegment.copy(t.segment(), 0, pinned.hostSegment(), 0, bytes);
            stream.copy(pinned, 0, view(dst), 0, bytes);
            stream.synchronize();
        }
    }

    private CudaStorage view(Allocation a) {
        return CudaStorage.view(device, a.address(), a.size(), () -> { });
    }

    // ------------------------------------------------------------------ running

    /** Uploads the graph inputs, by input name. */
    public void setInputs(Map<String, Tensor> inputs) {
        for (Node n : model.graph().inputs()) {
            String name = n.attrs().getString("name", n.name());
            Tensor t = inputs.get(name);
            if (t == null) {
                throw new IllegalArgumentException("no value for input '" + name + "'");
            }
            upload(values.get(n.name()), t, n.type());
        }
    }

    /**
     * Enqueues one forward on the session's stream (kernel by kernel, no graph; no synchronisation).
     * Counted in {@link #forwardStats} as a forward that did not replay a graph.
     */
    public void forward() {
        plainForwards++;
        runSteps();
    }

    /**
     * One forward through the graph runner: captured on the first call, replayed after (policy
     * permitting). An eager session has no graph: its forwards are plain forwards.
     */
    public void forwardGraph() {
        if (options.mode() != Mode.COMPILED) {
            forward();
            return;
        }
        graphs.run("forward", stream, this::runSteps);
    }

    /** One forward's steps, uncounted: the counted entry points and the session's own priming runs. */
    void runSteps() {
        if (options.mode() == Mode.COMPILED) {
            for (int i = 0; i < bound.size(); i++) {
                device.step(stepNames, i);
                bound.get(i).run();
            }
        } else {
            eagerForward();
        }
    }

    /** Every forward the caller asked for, by how it ran: graph_hit_pct over the whole session. */
    public ForwardStats forwardStats() {
        GraphRunner.Stats g = graphs.stats();
        return new ForwardStats(g.replays(), g.eagerRuns(), plainForwards);
    }

    private long plainForwards;

    /**
     * Fills the arena, scratch and transient buffers with 0xFF bytes (NaN in f32, bf16 and f16),
     * so that an element no kernel writes shows up as NaN in the output (tests). An eager session
     * allocates its activations during the forward, from blocks that still hold the last forward's
     * values: there, the next forward fills each activation with 0xFF as it is allocated, before
     * the kernel that should write it.
     */
    public void poison() {
        List<Allocation> all = new ArrayList<>(scratch.values());
        all.add(transientArea);
        if (arena != null) {
            all.add(arena);
        }
        for (Allocation a : all) {
            stream.memset(view(a), 0, (byte) 0xFF, a.size());
        }
        stream.synchronize();
        poisonNextEager = options.mode() == Mode.EAGER;
    }

    private boolean poisonNextEager;

    /**
     * Compiled sessions: runs the steps of kernels 0..{@code kernel} and returns that kernel's
     * output (later kernels have not overwritten it yet): a per-kernel check against the
     * reference interpreter on the compiled graph.
     */
    public Tensor runUntil(int kernel) {
        if (options.mode() != Mode.COMPILED) {
            throw new IllegalStateException("runUntil needs a compiled session");
        }
        List<Step> steps = lowered.steps();
        for (int i = 0; i < steps.size() && steps.get(i).kernel() <= kernel; i++) {
            bound.get(i).run();
        }
        return output(model.kernels().get(kernel).output().value());
    }

    public void synchronize() {
        stream.synchronize();
    }

    /** The first graph output, downloaded (synchronises the stream). */
    public Tensor output() {
        return output(model.graph().outputs().getFirst());
    }

    public Tensor output(String value) {
        TensorType t = model.graph().type(value).contiguous();
        Tensor out = Tensor.allocate(t);
        long bytes = t.bytes();
        try (CudaStorage pinned = device.allocatePinned(bytes)) {
            stream.copy(view(addressOf(value), bytes), 0, pinned, 0, bytes);
            stream.synchronize();
            MemorySegment.copy(pinned.hostSegment(), 0, out.segment(), 0, bytes);
        }
        return out;
    }

    private CudaStorage view(long address, long bytes) {
        return CudaStorage.view(device, address, bytes, () -> { });
    }

    /** One step of the compiled forward and its device time. */
    public record StepTime(String op, double ms) {}

    /**
     * Where the compiled forward's time goes: every step timed alone (median of {@code iters}
     * CUDA-event runs after {@code warm}), in stream order ({@link StepProfiler#alone}).
     */
    public List<StepTime> profile(int warm, int iters) {
        requireCompiled();
        return StepProfiler.alone(this, lowered.steps(), bound, warm, iters);
    }

    /**
     * Where the compiled forward's time goes, measured inside whole forwards
     * ({@link StepProfiler#inForward}): the steps add up to (about) the forward's time.
     */
    public List<StepTime> profileInForward(int warm, int iters) {
        requireCompiled();
        return StepProfiler.inForward(this, lowered.steps(), bound, warm, iters);
    }

    private void requireCompiled() {
        if (options.mode() != Mode.COMPILED) {
            throw new IllegalStateException("profile needs a compiled session");
        }
    }

    /** Sets one GEMM's cuBLASLt candidate and rebinds the forward (the in-forward tuner, probes). */
    void chooseGemm(Step.GemmUse use, int candidate) {
        gemmChoice.put(use, candidate);
        bound = bindAll();
    }

    /** How many cuBLASLt candidates a plan asks for and the autotuner times (the options' {@code BackendChoices}). */
    int gemmCandidates() {
        return model.options().choices().gemmCandidates();
    }

    CublasLtGemm gemm(GemmSpec spec) {
        return gemms.get(spec);
    }


    public double timeMs(Runnable work, int warm, int iters) {
        return EventTiming.medianMs(device, stream, work, warm, iters);
    }

    /** Median ms of {@code work} under sustained load ({@link EventTiming#sustainedMedianMs}). */
    public double sustainedMs(Runnable work, double warmMs, int iters) {
        return EventTiming.sustainedMedianMs(device, stream, work, warmMs, iters);
    }

    // ------------------------------------------------------------------ binding

    private List<Runnable> bindAll() {
        List<Runnable> r = new ArrayList<>();
        for (Step s : lowered.steps()) {
            r.add(bind(s));
        }
        return r;
    }

    Runnable bind(Step s) {
        return switch (s) {
            case Step.Launch l -> bindLaunch(l, l.source(), l.args());
            case Step.Gemm gs -> {
                CublasLtGemm gemm = gemms.get(gs.spec());
                GemmSpec sp = gs.spec();
                long a = bound(gs, "A", gs.a(), LaunchContract.gemmBytes(sp, 'A'), LaunchContract.GEMM_ALIGNMENT);
                long b = bound(gs, "B", gs.b(), LaunchContract.gemmBytes(sp, 'B'), LaunchContract.GEMM_ALIGNMENT);
                long c = gs.c() == null ? 0 : bound(gs, "C", gs.c(), LaunchContract.gemmBytes(sp, 'D'), LaunchContract.GEMM_ALIGNMENT);
                long d = bound(gs, "D", gs.d(), LaunchContract.gemmBytes(sp, 'D'), LaunchContract.GEMM_ALIGNMENT);
                long bias = gs.bias() == null ? 0
                        : bound(gs, "bias", gs.bias(), (long) sp.n() * sp.biasType().bytes, LaunchContract.GEMM_ALIGNMENT);
                float beta = gs.beta();
                long ws = workspace.address();
                int choice = gemmChoice.getOrDefault(gs.use(), 0);
                if (!gemm.candidates().isEmpty()) {
                    long need = gemm.candidates().get(choice).workspaceBytes();
                    contract(gs, "workspace", ws, Math.min(workspace.size(), WORKSPACE_BYTES), need, LaunchContract.GEMM_ALIGNMENT);
                }
                yield () -> gemm.run(stream, a, b, c, d, bias, 1f, beta, ws, WORKSPACE_BYTES, choice);
            }
        };
    }

    Runnable bindLaunch(CudaKernelSource src, List<Step.Arg> args) {
        return bindLaunch(new Step.Launch(-1, null, src, args), src, args);
    }

    private Runnable bindLaunch(Step.Launch step, CudaKernelSource src, List<Step.Arg> args) {
        CudaModule.CudaKernel k = load(src);
        Object[] a = new Object[args.size()];
        for (int i = 0; i < a.length; i++) {
            a[i] = switch (args.get(i)) {
                case Step.Ptr p -> bound(step, LaunchContract.operand(step, i), p.buf(), p.extent(),
                        src.requiresAligned16() ? 16 : 1);
                case Step.I64 v -> v.v();
                case Step.I32 v -> v.v();
                case Step.F32 v -> v.v();
            };
        }
        Object[] all = TensorMaps.append(src, a, device.driver());
        LaunchConfig c = src.launch();
        int[] grid = {Math.toIntExact(c.gridX()), c.gridY(), c.gridZ()};
        int[] block = {c.blockX(), c.blockY(), c.blockZ()};
        int shared = c.dynamicSharedBytes();
        return () -> k.launch(stream, grid, block, shared, all);
    }

    /** {@code b}'s address, after checking that its memory holds {@code extent} bytes with {@code alignment}. */
    private long bound(Step step, String operand, Buf b, long extent, long alignment) {
        long address = address(b);
        contract(step, operand, address, room(b, address), extent, alignment);
        return address;
    }

    private void contract(Step step, String operand, long address, long room, long extent, long alignment) {
        if ((address == 0 && extent > 0) || extent > room || (alignment > 1 && address % alignment != 0)) {
            int index = -1;
            for (int i = 0; i < lowered.steps().size(); i++) {
                if (lowered.steps().get(i) == step) {
                    index = i;
                }
            }
            LaunchContract.checkBound(model, index, step, operand, address, room, extent, alignment);
        }
    }

    /** Bytes from {@code address} (inside {@code b}'s memory) to the end of the memory backing {@code b}. */
    private long room(Buf b, long address) {
        return switch (b.kind()) {
            case TRANSIENT -> transientArea.address() + transientArea.size() - address;
            case SCRATCH -> scratch.get(b.name()).size();
            case VALUE -> {
                Allocation a = values.get(b.name());
                if (a != null) {
                    yield a.address() + a.size() - address;
                }
                MemoryPlan.Placement p = placements.get(b.name());
                yield p == null ? 0 : Math.min(p.buffer().bytes(), arena.address() + arena.size() - address);
            }
        };
    }

    private long address(Buf b) {
        return switch (b.kind()) {
            case TRANSIENT -> transientArea.address() + b.offset();
            case SCRATCH -> scratch.get(b.name()).address();
            case VALUE -> addressOf(b.name());
        };
    }

    private long addressOf(String value) {
        Allocation a = values.get(value);
        if (a != null) {
            return a.address();
        }
        if (arena == null) {
            throw new IllegalStateException("value %" + value + " is not allocated in this eager run");
        }
        return arena.address() + plan.offset(value);
    }

    /** Eager: each kernel's output allocated just before it, freed after its last reader. */
    private void eagerForward() {
        // the previous forward's outputs stayed readable until now
        for (Map.Entry<String, Allocation> e : eagerOutputs.entrySet()) {
            values.remove(e.getKey());
            alloc.free(e.getValue());
        }
        eagerOutputs.clear();
        boolean poison = poisonNextEager;
        poisonNextEager = false;
        Map<String, MemoryPlan.Placement> byValue = plan.byValue();
        Set<String> outputs = new HashSet<>(model.graph().outputs());
        List<Step> steps = lowered.steps();
        int si = 0;
        for (Kernel k : model.kernels()) {
            String out = k.output().value();
            if (!values.containsKey(out)) {
                Allocation a = allocate(k.output().bytes());
                if (poison) {
                    stream.memset(view(a), 0, (byte) 0xFF, a.size());
                }
                values.put(out, a);
            }
            while (si < steps.size() && steps.get(si).kernel() == k.index()) {
                device.step(stepNames, si);
                bind(steps.get(si++)).run();
            }
            for (MemoryPlan.Placement p : byValue.values()) {
                String v = p.buffer().value();
                if (p.buffer().last() == k.index() && !persistent.contains(v) && !outputs.contains(v) && values.containsKey(v)) {
                    alloc.free(values.remove(v));
                }
            }
        }
        for (String v : outputs) {
            if (!persistent.contains(v) && values.containsKey(v)) {
                eagerOutputs.put(v, values.get(v));
            }
        }
    }

    private final Map<String, Allocation> eagerOutputs = new HashMap<>();

    // ------------------------------------------------------------------ autotuning hooks

    /** Runs the autotuner (after one forward so every buffer holds real data) and rebinds. */
    public void autotune() {
        if (options.mode() != Mode.COMPILED) {
            return;
        }
        runSteps();
        stream.synchronize();
        Autotuner tuner = new Autotuner(this, options.tune(), device.target().name(), target);
        boolean changed = tuner.tuneGemms(lowered, gemms, gemmChoice);
        changed |= tuner.tuneKernels(lowered, target);
        options.tune().save();
        if (changed) {
            lowered = CudaLowering.lower(model, target, tuner::targetFor, tuner::splitGelu);
            loadKernels(lowered);
            planGemms(lowered);
            tuner.applyCachedGemms(lowered, gemms, gemmChoice);
        }
        bound = bindAll();
    }

    // ------------------------------------------------------------------ figures

    public CompiledModel model() {
        return model;
    }

    public CudaLowering.Lowered lowered() {
        return lowered;
    }

    public CudaDevice device() {
        return device;
    }

    public CudaStream stream() {
        return stream;
    }

    /** Why the last CUDA graph capture failed, or {@code null}. */
    public String graphFailure() {
        return graphs.lastFailure();
    }

    /** The graph runner's counters: forwardGraph calls only; {@link #forwardStats} counts every forward. */
    public GraphRunner.Stats graphStats() {
        return graphs.stats();
    }

    /** Kernel launches + GEMMs of one forward. */
    public int deviceOps() {
        return lowered.steps().size();
    }

    /** The most bytes held from the allocator at once: params, inputs, arena, scratch, workspace, activations. */
    public long peakBytes() {
        return Math.max(peakAllocated, alloc.stats().allocated());
    }

    public Map<Step.GemmUse, Integer> gemmChoices() {
        return Map.copyOf(gemmChoice);
    }

    /**
     * Waits for the stream, then releases everything. After a context loss it releases quietly
     * (the device memory, modules and graphs went with the context) and throws nothing: the loss
     * was or will be reported by the call that runs into it.
     */
    @Override
    public void close() {
        try {
            stream.synchronize();
        } catch (CudaContextLostException e) {
            // recorded on the device; what follows frees host-side state and skips the driver
        }
        graphs.close();
        for (CublasLtGemm gm : gemms.values()) {
            gm.close();
        }
        lt.close();
        eagerOutputs.values().forEach(alloc::free);
        eagerOutputs.clear();
        fixed.forEach(alloc::free);
        fixed.clear();
        alloc.emptyCache();
        loadedModules.forEach(CudaModule::close);
        if (fill != null) {
            fill.close();
        }
        stream.close();
        source.close();
    }
}
