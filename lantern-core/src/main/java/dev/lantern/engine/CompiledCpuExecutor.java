package dev.lantern.engine;

import dev.lantern.cpu.EagerExecutor;
import dev.lantern.cpu.PackedWeight;
import dev.lantern.cpu.Elementwise;
import dev.lantern.cpu.OpKernels;
import dev.lantern.cpu.View;
import dev.lantern.engine.cpu.FusedKernels;
import dev.lantern.engine.cpu.SliceInPlace;
import dev.lantern.ir.Graph;
import dev.lantern.ir.LanternException;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.TensorType;
import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.Operand;
import dev.lantern.plan.MemoryPlan;
import dev.lantern.tensor.Tensor;
import dev.lantern.trace.RuntimeCounters;
import dev.lantern.trace.Tracing;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs a {@link CompiledModel} on the CPU: its kernels in schedule order, every intermediate in
 * one arena laid out by the memory plan, each kernel multi-threaded by the backend.
 *
 * <p>{@link #bind} takes the parameters once (converted to the dtype the compiled graph declares,
 * so autocast's bf16 weights are converted here and not per forward), materialises constants and
 * packs every GEMM weight into the micro-kernel's panels ({@link PackedWeight}): the packed copy is
 * what forwards read, so a weight changed in place after bind needs bind again.
 * {@link #run} then only builds the input views, walks the free views, runs the prepared kernels
 * and leaves the outputs in fresh tensors or in the caller's own (each output's kernel writes into
 * that tensor where it can, {@link DirectOutputs}; the rest are copied out of the arena)
 * ({@link #run(Map, Map)}, which allocates nothing) (the arena is reused by the next forward, so one
 * executor runs one forward at a time: a second call while one runs, from another thread or
 * re-entered, is a typed error, as is any use after {@link #close}).
 */
public final class CompiledCpuExecutor implements AutoCloseable {
    private final CompiledModel model;
    private final Graph graph;
    private final Arena arena = Arena.ofShared();
    /** The packed weights of the last {@link #bind}; null before. */
    private Arena weights;
    private final MemorySegment memory;
    private final Map<String, View> fixed = new HashMap<>();
    private final Map<String, Long> offsets = new HashMap<>();
    private final List<FusedKernels.Bound> bound = new ArrayList<>();
    /** Slices read in place by their attention readers, not copied ({@link SliceInPlace}). */
    private final Set<String> slicesInPlace;
    /** Per-kernel wall time summed over the profiled forwards; written only while {@link #profiling} is on. */
    private final long[] kernelNanos;
    private long profiledForwards;
    /** Time copying the outputs out of the arena, summed like {@link #kernelNanos}. */
    private long outputCopyNanos;
    /** Off by default: a forward then reads no clock and writes no counter (the profile is for benchmarks). */
    private boolean profiling;
    private boolean bound_;
    private volatile boolean closed;
    /** Set while a forward runs: the arena holds one forward's values, so a second at once would corrupt both. */
    private final AtomicBoolean running = new AtomicBoolean();

    public CompiledCpuExecutor(CompiledModel model) {
        this.model = model;
        this.graph = model.graph();
        MemoryPlan plan = model.plan();
        this.memory = arena.allocate(Math.max(64, plan.arenaBytes()), 64);
        for (MemoryPlan.Placement p : plan.placements()) {
            offsets.put(p.buffer().value(), p.offset());
        }
        for (Kernel k : model.kernels()) {
            if (!k.sideOutputs().isEmpty()) {
                throw new IllegalArgumentException("kernel " + k.name() + " also writes " + k.sideOutputs()
                        + ", which the CPU kernels do not: compile for the cpu target (" + model.options().target() + " given)");
            }
            bound.add(FusedKernels.prepare(k));
        }
        this.kernelNanos = new long[model.kernels().size()];
        this.slicesInPlace = SliceInPlace.of(graph, model.kernels());
    }

    /** Binds parameters by name (as {@code Model.parameters(seed)} returns them). Call before {@link #run}. */
    public CompiledCpuExecutor bind(Map<String, Tensor> params) {
        for (Node n : graph.nodes()) {
            if (n.op() == Op.PARAM) {
                String key = n.attrs().getString("name", n.name());
                Tensor t = params.get(key);
                if (t == null) {
                    throw new LanternException("compiled: no tensor given for param \"" + key + "\" (" + n + ")");
                }
                Tensor typed = t.dtype() == n.type().dtype() ? t : t.cast(n.type().dtype());
                fixed.put(n.name(), n.type().layout().isContiguous() ? View.of(typed).reshape(n.type().shape()) : strided(key, typed, n.type()));
            } else if (n.op() == Op.CONSTANT) {
                Tensor c = Tensor.allocate(n.type());
                Elementwise.fill(View.of(c), (float) n.attrs().getDouble("value", 0));
                fixed.put(n.name(), View.of(c));
            }
        }
        packWeights();
        bound_ = true;
        return this;
    }

    /**
     * Packs every gemm's B that is a parameter (or a free view of one: a transposed weight) into the
     * micro-kernel's panels once, so that no forward packs a weight again; a weight read by several
     * kernels is packed once. Replaces what an earlier bind packed.
     */
    private void packWeights() {
        if (weights != null) {
            weights.close();
        }
        weights = Arena.ofShared();
        Map<String, View> known = new HashMap<>(fixed);
        for (Node n : graph.nodes()) {
            if (!n.op().isSource() && dev.lantern.kernel.KernelLowering.isFree(n, graph) && known.containsKey(n.input(0))) {
                known.put(n.name(), EagerExecutor.freeView(n, known.get(n.input(0))));
            }
        }
        Map<String, PackedWeight> packed = new HashMap<>();
        List<Kernel> kernels = model.kernels();
        for (int i = 0; i < kernels.size(); i++) {
            Kernel k = kernels.get(i);
            if (k.inputs().size() < 2) {
                continue;
            }
            String b = k.inputs().get(1).value();
            View w = FusedKernels.weightOperand(k, known.get(b));
            if (w != null) {
                String key = b + (w == known.get(b) ? "" : "^T");
                PackedWeight p = packed.computeIfAbsent(key, x -> PackedWeight.pack(w, weights));
                bound.set(i, FusedKernels.prepare(k, p));
            } else {
                bound.set(i, FusedKernels.prepare(k));
            }
        }
    }

    /**
     * A param whose type is strided (a transposed weight handed over as stored) read at those strides,
     * as the eager executor and the reference read it; refused when the strides reach past the tensor.
     */
    private static View strided(String key, Tensor t, TensorType type) {
        long[] st = type.layout().strides(type.shape());
        long last = 0;
        for (int i = 0; i < st.length; i++) {
            last += (long) (type.shape().dim(i) - 1) * st[i];
        }
        if (type.shape().numel() > 0 && last >= t.numel()) {
            throw new LanternException("compiled: param \"" + key + "\" is " + t + ", too small for " + type);
        }
        return View.strided(t, type.shape(), st);
    }

    /** One forward: inputs by name; outputs by the source graph's SSA names, as fresh dense tensors. */
    public Map<String, Tensor> run(Map<String, Tensor> inputs) {
        return run(inputs, newOutputs());
    }

    /**
     * Dense tensors of the outputs' types, keyed by the source graph's output names: what
     * {@link #run(Map, Map)} writes into. Allocating them once and passing them to every forward
     * saves a fresh native allocation per forward (for GPT-2-small's 128 × 50257 logits, a zeroed
     * 26 MB that cost more than the forward's GEMMs at batch 1).
     */
    public Map<String, Tensor> newOutputs() {
        Map<String, Tensor> out = new LinkedHashMap<>();
        List<String> names = model.source().outputs();
        for (int i = 0; i < graph.outputs().size(); i++) {
            out.put(names.get(i), Tensor.allocate(graph.node(graph.outputs().get(i)).type().dtype(),
                    graph.node(graph.outputs().get(i)).type().shape()));
        }
        return out;
    }

    /**
     * One forward into caller-owned outputs (as {@link #newOutputs} makes them: every output name,
     * each a dense tensor of its output's dtype and element count); returns {@code outputs}. The
     * executor writes them during this call only and keeps no reference: what the caller holds is
     * never overwritten behind its back, and reusing one set across forwards is the caller's choice.
     */
    public Map<String, Tensor> run(Map<String, Tensor> inputs, Map<String, Tensor> outputs) {
        if (!bound_) {
            throw new LanternException("compiled: bind(parameters) before run(inputs)");
        }
        if (!running.compareAndSet(false, true)) {
            throw new LanternException("compiled: this executor is already running a forward; its arena holds one forward at a time "
                    + "(use one executor per thread)");
        }
        try {
            if (closed) {
                throw new LanternException("compiled: run on a closed executor (its arena is freed)");
            }
            return forward(inputs, outputs);
        } finally {
            running.set(false);
        }
    }

    private Map<String, Tensor> forward(Map<String, Tensor> inputs, Map<String, Tensor> out) {
        List<String> names = model.source().outputs();
        for (int i = 0; i < graph.outputs().size(); i++) {
            TensorType type = graph.node(graph.outputs().get(i)).type();
            Tensor t = out.get(names.get(i));
            if (t == null || t.dtype() != type.dtype() || t.numel() != type.shape().numel()) {
                throw new LanternException("compiled: output \"" + names.get(i) + "\" must be a dense " + type + ", given " + t);
            }
        }
        Map<String, View> env = new HashMap<>(fixed);
        Map<String, Tensor> direct = DirectOutputs.of(graph, model.source().outputs(), inputs, out);
        for (Node n : graph.nodes()) {
            if (n.op() == Op.INPUT) {
                Tensor t = inputs.get(n.attrs().getString("name", n.name()));
                if (t == null || t.numel() != n.type().shape().numel()) {
                    throw new LanternException("compiled: input \"" + n.attrs().getString("name", n.name()) + "\" must be " + n.type() + ", given " + t);
                }
                env.put(n.name(), View.of(t.dtype() == n.type().dtype() ? t : t.cast(n.type().dtype())).reshape(n.type().shape()));
            } else if (!n.op().isSource() && dev.lantern.kernel.KernelLowering.isFree(n, graph)) {
                env.put(n.name(), EagerExecutor.freeView(n, env.get(n.input(0))));
            } else if (slicesInPlace.contains(n.name())) {
                env.put(n.name(), OpKernels.slice(env.get(n.input(0)), n.attrs()));
            } else if (!n.op().isSource()) {
                Tensor t = direct.get(n.name());
                env.put(n.name(), t != null ? View.of(t).reshape(n.type().shape()) : arenaView(n.name(), n.type()));
            }
        }
        List<Kernel> kernels = model.kernels();
        boolean traced = Tracing.enabled(); // read once: a trace installed mid-forward starts with the next one
        long forwardStart = traced ? System.nanoTime() : 0;
        int launched = 0;
        for (int i = 0; i < kernels.size(); i++) {
            Kernel k = kernels.get(i);
            if (k.output().shape().numel() == 0 || slicesInPlace.contains(k.output().value())) {
                continue; // a zero-size value has nothing to compute; a slice read in place is a view
            }
            launched++;
            List<View> in = new ArrayList<>(k.inputs().size());
            for (Operand o : k.inputs()) {
                in.add(env.get(o.value()));
            }
            List<View> ws = new ArrayList<>(k.workspace().size());
            for (Operand w : k.workspace()) {
                ws.add(arenaView(w.value(), TensorType.of(w.dtype(), w.shape())));
            }
            try {
                if (profiling || traced) {
                    long t0 = System.nanoTime();
                    bound.get(i).run(in, env.get(k.output().value()), ws);
                    long dt = System.nanoTime() - t0;
                    if (profiling) {
                        kernelNanos[i] += dt;
                    }
                    if (traced) {
                        Tracing.complete(k.name(), "kernel", t0, dt, Map.of("kernel", i, "kind", k.kind().toString()));
                    }
                } else {
                    bound.get(i).run(in, env.get(k.output().value()), ws);
                }
            } catch (RuntimeException e) {
                throw e instanceof LanternException ? e : new LanternException("compiled: kernel " + k.name() + " (" + k.node() + "): " + e, e);
            }
        }
        RuntimeCounters.launched(launched); // once per forward: kernel_launches_total at a LongAdder's cost
        if (profiling) {
            profiledForwards++;
        }
        long copyStart = profiling ? System.nanoTime() : 0;
        // Keyed by the source graph's output names: passes may rename a returned value (an identity
        // cast dropped, a duplicate merged) but keep the outputs' positions.
        for (int i = 0; i < graph.outputs().size(); i++) {
            if (direct.containsKey(graph.outputs().get(i))) {
                continue; // its kernel wrote it in place
            }
            View v = env.get(graph.outputs().get(i));
            Tensor t = out.get(names.get(i));
            if (java.util.Arrays.equals(v.strides(), v.shape().contiguousStrides())) {
                // a dense output is one bulk copy: the general elementwise program took ~20 ns an element
                // (39-52 % of GPT-2-small's CPU forward went to copying its logits, `bench cpu`)
                long bytes = v.shape().numel() * v.dtype().bytes();
                java.lang.foreign.MemorySegment.copy(v.segment(), v.offset() * v.dtype().bytes(), t.segment(), 0, bytes);
            } else {
                Elementwise.copy(v, View.of(t).reshape(v.shape()));
            }
        }
        if (profiling) {
            outputCopyNanos += System.nanoTime() - copyStart;
        }
        if (traced) {
            Tracing.complete("compiled run", "run", forwardStart, System.nanoTime() - forwardStart, null);
        }
        return out;
    }

    private View arenaView(String value, TensorType t) {
        Long byteOffset = offsets.get(value);
        if (byteOffset == null) {
            throw new IllegalStateException("the memory plan has no buffer for %" + value);
        }
        // buffers are 64-byte aligned, so the byte offset is a whole number of elements
        return View.of(memory, t.dtype(), byteOffset / t.dtype().bytes(), t.shape());
    }

    /**
     * Turns the per-kernel profile on or off (it starts off). Turning it on clears the sums, so that
     * {@link #kernelNanos} covers exactly the forwards run since. The kernels run the same code
     * either way: the profile reads the clock around each one and changes no result.
     */
    public void profiling(boolean on) {
        if (running.get()) {
            throw new LanternException("compiled: profiling(" + on + ") while a forward is running on this executor");
        }
        if (on && !profiling) {
            Arrays.fill(kernelNanos, 0);
            profiledForwards = 0;
            outputCopyNanos = 0;
        }
        profiling = on;
    }

    /** Whether {@link #profiling(boolean)} is on. */
    public boolean profiling() {
        return profiling;
    }

    /** Forwards profiled since profiling was last turned on. */
    public long profiledForwards() {
        return profiledForwards;
    }

    /** Time spent copying the results out of the arena into the outputs, summed over the profiled forwards. */
    public long outputCopyNanos() {
        return outputCopyNanos;
    }

    /**
     * Wall time of each kernel (in {@link CompiledModel#kernels()} order) summed over the
     * {@link #profiledForwards} forwards, in nanoseconds (a copy; zeros when never profiled). A
     * skipped zero-size kernel counts 0.
     */
    public long[] kernelNanos() {
        return kernelNanos.clone();
    }

    /** Fills the whole arena with NaN, so that a value no kernel wrote shows in the outputs (for tests). */
    public void poisonArena() {
        if (closed) {
            throw new LanternException("compiled: poisonArena on a closed executor");
        }
        memory.fill((byte) 0xFF); // 0xFFFFFFFF is a NaN in f32, 0xFFFF in bf16 and f16
    }

    public CompiledModel model() {
        return model;
    }

    @Override
    public void close() {
        if (!running.compareAndSet(false, true)) {
            throw new LanternException("compiled: close() while a forward is running on this executor");
        }
        try {
            if (!closed) {
                closed = true;
                arena.close();
                if (weights != null) {
                    weights.close();
                }
            }
        } finally {
            running.set(false);
        }
    }
}
