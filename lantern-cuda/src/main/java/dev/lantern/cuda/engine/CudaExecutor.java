package dev.lantern.cuda.engine;

import dev.lantern.trace.RuntimeCounters;
import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaEvent;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.driver.GraphRunner;
import dev.lantern.cuda.ffi.CudaContextLostException;
import dev.lantern.cuda.ffi.Nvtx;
import dev.lantern.cuda.lower.Step;
import dev.lantern.ir.Node;
import dev.lantern.ir.TensorType;
import dev.lantern.runtime.GraphPolicy;
import dev.lantern.runtime.alloc.Allocation;
import dev.lantern.tensor.Tensor;
import dev.lantern.trace.Span;
import dev.lantern.trace.Tracing;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * Runs a {@link CudaProgram} on one stream: owns its buffers ({@link BufferMap}), binds its steps
 * once ({@link StepBinder}), launches them kernel by kernel, eagerly ({@link EagerForward}) or
 * through a captured CUDA graph ({@link GraphRunner}), and times and profiles them. Compiled
 * forwards run out of one arena laid out by the memory plan, every launch bound once, so the
 * forward can be captured and replayed.
 */
final class CudaExecutor implements StepRunner, KernelTimer, AutoCloseable {
    private final CudaDevice device;
    private final boolean compiled;
    private final CudaStream stream;
    private final BufferMap buffers;
    private final StepBinder binder;
    private final EagerForward eager;
    private final GraphRunner graphs;
    private CudaProgram program;
    private List<Runnable> bound; // compiled: every step with its addresses resolved
    private DeviceFill fill;
    private CudaStorage staging; // pinned host memory for uploads and downloads, kept and grown
    private long plainForwards;
    // NVTX ranges around every step of untraced forwards when LANTERN_NVTX=1 and the library loads (each costs an
    // FFM call and a string, so they are off otherwise); traced forwards (TracedForward) carry them whenever NVTX loads
    private final Nvtx nvtx;
    // names a step for a context-loss report: formatted only then (CudaDevice.step)
    private final IntFunction<String> stepNames = i -> "#" + i + " " + StepProfiler.describe(program.steps().get(i));

    /**
     * Allocates and uploads {@code params} (by parameter name; {@code null}: drawn on the device),
     * allocates the inputs, scratch, transient area and (compiled) the arena.
     */
    CudaExecutor(CudaDevice device, CudaProgram program, boolean compiled, GraphPolicy policy, Map<String, Tensor> params) {
        this.device = device;
        this.program = program;
        this.compiled = compiled;
        this.stream = device.newStream(false);
        this.buffers = new BufferMap(device, stream, program.plan());
        this.binder = new StepBinder(device, stream, buffers, program);
        this.eager = new EagerForward(device, stream, buffers, binder);
        this.graphs = new GraphRunner(device, compiled ? policy : GraphPolicy.OFF);
        this.nvtx = "1".equals(System.getenv("LANTERN_NVTX")) ? device.libraries().nvtx() : Nvtx.none();
        Map<String, Long> room = program.lowered().valueBytes();
        for (Node n : program.model().graph().params()) {
            String name = n.attrs().getString("name", n.name());
            long bytes = n.type().contiguous().bytes();
            long padding = Math.max(0, room.getOrDefault(n.name(), 0L) - bytes);
            Allocation a = buffers.persistentValue(n.name(), bytes + padding);
            if (padding > 0) {
                // rows a padded GEMM reads behind the table (they reach only the columns it drops)
                stream.memset(view(a.address(), a.size()), bytes, (byte) 0, padding);
            }
            if (params == null) {
                fillParam(a, n, name);
                continue;
            }
            Tensor t = params.get(name);
            if (t == null) {
                throw new IllegalArgumentException("no value for parameter '" + name + "' of " + n);
            }
            upload(a, t, n.type());
        }
        for (Node n : program.model().graph().inputs()) {
            buffers.persistentValue(n.name(), n.type().contiguous().bytes());
        }
        for (Node n : program.model().graph().nodes()) {
            if (n.op() == dev.lantern.ir.Op.CONSTANT) {
                // a constant is a scalar filled over its shape: made on the host once, uploaded like a parameter
                Tensor c = Tensor.allocate(n.type().contiguous());
                float v = (float) n.attrs().getDouble("value", 0);
                for (long i = 0; i < c.numel(); i++) {
                    c.set(i, v);
                }
                upload(buffers.persistentValue(n.name(), n.type().contiguous().bytes()), c, n.type().contiguous());
            }
        }
        use(program);
        stream.synchronize();
    }

    /** Runs {@code p} from now on (a program compiled again after autotuning): memory grown, steps bound again. */
    void use(CudaProgram p) {
        this.program = p;
        binder.use(p);
        buffers.layout(p, compiled);
        bound = compiled ? bindAll() : null;
    }

    CudaProgram program() {
        return program;
    }

    // ------------------------------------------------------------------ data

    /**
     * Parameters drawn on the device (benchmarks of the big blocks: 400 MB of weights drawn on
     * the host would cost seconds): vectors named {@code *norm*.weight} near 1, other vectors
     * (biases) small, matrices uniform with the std of {@code ParamInit.normal(0.02)}.
     */
    private void fillParam(Allocation a, Node n, String name) {
        TensorType t = n.type();
        long seed = name.hashCode() * 0x9E3779B97F4A7C15L + 17;
        boolean vector = t.shape().rank() == 1;
        float scale = vector ? (name.contains("norm") ? 0.1f : 0.02f) : 0.02f * (float) Math.sqrt(3);
        float offset = vector && name.contains("norm") && name.endsWith("weight") ? 1f : 0f;
        deviceFill().fill(stream, a.address(), t.shape().numel(), t.dtype(), seed, scale, offset);
    }

    private DeviceFill deviceFill() {
        if (fill == null) {
            fill = new DeviceFill(device);
        }
        return fill;
    }

    /** Graph inputs drawn on the device, uniform in [-√3, √3) (unit variance), from {@code seed}. */
    void fillInputs(long seed) {
        for (Node n : program.model().graph().inputs()) {
            deviceFill().fill(stream, buffers.value(n.name()).address(), n.type().shape().numel(), n.type().dtype(),
                    seed * 31 + n.name().hashCode(), (float) Math.sqrt(3));
        }
        stream.synchronize();
    }

    /** Uploads the graph inputs, by input name. */
    void setInputs(Map<String, Tensor> inputs) {
        setInputs(inputs, true);
    }

    /**
     * Uploads the graph inputs named in {@code inputs}; with {@code all}, every input must be
     * there. A name that is no input is an error either way.
     */
    void setInputs(Map<String, Tensor> inputs, boolean all) {
        int used = 0;
        for (Node n : program.model().graph().inputs()) {
            String name = n.attrs().getString("name", n.name());
            Tensor t = inputs.get(name);
            if (t == null) {
                if (all) {
                    throw new IllegalArgumentException("no value for input '" + name + "'");
                }
                continue;
            }
            upload(buffers.value(n.name()), t, n.type());
            used++;
        }
        if (!all && used != inputs.size()) {
            throw new IllegalArgumentException("inputs " + inputs.keySet() + " name one that the graph does not have");
        }
    }

    /** Where {@code value}'s bytes are on the device (a view's: the value it views). */
    long addressOf(String value) {
        return buffers.addressOf(program.storageOf(value));
    }

    private void upload(Allocation dst, Tensor t, TensorType type) {
        if (t.dtype() != type.dtype() || !t.shape().equals(type.shape())) {
            throw new IllegalArgumentException("tensor " + t.dtype() + t.shape() + " does not match " + type);
        }
        long bytes = type.contiguous().bytes();
        CudaStorage pinned = staging(bytes);
        MemorySegment.copy(t.segment(), 0, pinned.hostSegment(), 0, bytes);
        stream.copy(pinned, 0, view(dst.address(), dst.size()), 0, bytes);
        stream.synchronize();
    }

    /**
     * Pinned host memory of at least {@code bytes}, reused by every upload and download (each
     * synchronises before the next may touch it): a page-locked allocation costs about a
     * millisecond, more than a small model's forward.
     */
    private CudaStorage staging(long bytes) {
        if (staging == null || staging.bytes() < bytes) {
            if (staging != null) {
                staging.close();
            }
            staging = device.allocatePinned(Math.max(bytes, 1L << 20));
        }
        return staging;
    }

    /** {@code value} downloaded (synchronises the stream). */
    Tensor output(String value) {
        TensorType t = program.model().graph().type(value).contiguous();
        Tensor out = Tensor.allocate(t);
        long bytes = t.bytes();
        CudaStorage pinned = staging(bytes);
        stream.copy(view(buffers.addressOf(program.storageOf(value)), bytes), 0, pinned, 0, bytes);
        stream.synchronize();
        MemorySegment.copy(pinned.hostSegment(), 0, out.segment(), 0, bytes);
        return out;
    }

    private CudaStorage view(long address, long bytes) {
        return CudaStorage.view(device, address, bytes, () -> { });
    }

    /**
     * Fills the arena, scratch and transient buffers with 0xFF bytes (NaN in f32, bf16 and f16), so that an
     * element no kernel writes shows up as NaN in the output (tests); eager activations as the next forward allocates them.
     */
    void poison() {
        for (Allocation a : buffers.planned()) {
            stream.memset(view(a.address(), a.size()), 0, (byte) 0xFF, a.size());
        }
        stream.synchronize();
        if (!compiled) {
            eager.poisonNext();
        }
    }

    /** One forward, kernel by kernel (no graph; no synchronisation); counted as a plain forward. */
    void forward() {
        plainForwards++;
        RuntimeCounters.launched(program.steps().size()); // kernel_launches_total: one per step, cuBLASLt calls included
        if (Tracing.enabled() && compiled) {
            TracedForward.run(device, stream, program.steps(), bound, stepNames);
        } else if (Tracing.enabled()) {
            try (Span s = Tracing.span("launch eager forward", "host")) {
                runSteps();
            }
        } else {
            runSteps();
        }
    }

    /** One forward through the graph runner: captured on the first call, replayed after (policy permitting). */
    void forwardGraph() {
        if (!compiled) {
            forward();
            return;
        }
        RuntimeCounters.launched(program.steps().size()); // a replay runs every step's kernel: counted as launched
        if (Tracing.enabled()) {
            TracedForward.graph(device, stream, () -> graphs.run("forward", stream, this::runSteps));
        } else {
            graphs.run("forward", stream, this::runSteps);
        }
    }

    /** One forward's steps, uncounted: the counted entry points and the session's own priming runs. */
    void runSteps() {
        if (compiled && nvtx.enabled()) {
            for (int i = 0; i < bound.size(); i++) {
                device.step(stepNames, i);
                nvtx.push(StepProfiler.describe(program.steps().get(i)));
                bound.get(i).run();
                nvtx.pop();
            }
        } else if (compiled) {
            for (int i = 0; i < bound.size(); i++) {
                device.step(stepNames, i);
                bound.get(i).run();
            }
        } else {
            eager.run(program, stepNames);
        }
    }

    /** One eager forward with {@code marks} recorded around its steps ({@link StepProfiler#eager}). */
    void runEagerMarked(List<CudaEvent> marks) {
        eager.run(program, stepNames, marks);
    }

    /** Compiled: the steps of kernels 0..{@code kernel}, and that kernel's output. */
    Tensor runUntil(int kernel) {
        List<Step> steps = program.steps();
        for (int i = 0; i < steps.size() && steps.get(i).kernel() <= kernel; i++) {
            bound.get(i).run();
        }
        return output(program.model().kernels().get(kernel).output().value());
    }

    ForwardStats forwardStats() {
        GraphRunner.Stats g = graphs.stats();
        return new ForwardStats(g.replays(), g.eagerRuns(), plainForwards);
    }

    GraphRunner.Stats graphStats() {
        return graphs.stats();
    }

    String graphFailure() {
        return graphs.lastFailure();
    }

    long peakBytes() {
        return buffers.peakBytes();
    }

    CudaStream stream() {
        return stream;
    }

    CudaDevice device() {
        return device;
    }

    // ------------------------------------------------------------------ binding and timing

    private List<Runnable> bindAll() {
        List<Runnable> r = new ArrayList<>();
        for (Step s : program.steps()) {
            r.add(binder.bind(s));
        }
        return r;
    }

    List<Runnable> bound() {
        return bound;
    }

    Runnable bind(Step s) {
        return binder.bind(s);
    }

    Map<Step.GemmUse, Integer> gemmChoice() {
        return binder.gemmChoice();
    }

    /** Sets one GEMM's cuBLASLt candidate and binds the forward again. */
    void chooseGemm(Step.GemmUse use, int candidate) {
        binder.gemmChoice().put(use, candidate);
        bound = compiled ? bindAll() : null;
    }

    @Override
    public Runnable launch(CudaKernelSource src, List<Step.Arg> args) {
        return binder.bindLaunch(src, args);
    }

    @Override
    public Runnable gemm(Step.Gemm step, int candidate) {
        return binder.bindGemm(step, candidate);
    }

    @Override
    public int available(GemmSpec spec) {
        return program.gemm(spec).candidates().size();
    }

    @Override
    public double medianMs(Runnable work, int warm, int iters) {
        return EventTiming.medianMs(device, stream, work, warm, iters);
    }

    @Override
    public double sustainedMs(Runnable work, double warmMs, int iters) {
        return EventTiming.sustainedMedianMs(device, stream, work, warmMs, iters);
    }

    /**
     * Waits for the stream, then releases everything. After a context loss it releases quietly
     * (the device memory, modules and graphs went with the context).
     */
    @Override
    public void close() {
        try {
            stream.synchronize();
        } catch (CudaContextLostException e) {
            // recorded on the device; what follows frees host-side state and skips the driver
        }
        graphs.close();
        eager.release();
        buffers.close();
        if (fill != null) {
            fill.close();
        }
        if (staging != null) {
            staging.close();
        }
        stream.close();
    }
}
