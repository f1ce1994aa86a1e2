package dev.lantern;

import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;
import dev.lantern.trace.RuntimeCounters;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A graph compiled by the pass pipeline, not yet tied to a device: the optimised graph, its
 * kernels and memory plan for the options' target ({@link #model()}). {@link #load} turns it into
 * a {@link Session} on a device; a device of another kind than the options' target, or the eager
 * mode, gets the graph compiled for it once more, cached in the program.
 */
public final class Program {
    private final Graph graph;
    private final CompileOptions options;
    private final Map<String, CompiledModel> models = new ConcurrentHashMap<>();

    Program(Graph graph, CompileOptions options) {
        this.graph = graph;
        this.options = options;
        model(); // compile now: bad graphs and options fail at compile, not at load
    }

    /** The graph as given. */
    public Graph graph() {
        return graph;
    }

    /** The options the program was compiled with. */
    public CompileOptions options() {
        return options;
    }

    /** The graph compiled with the program's options. */
    public CompiledModel model() {
        return model(options.target(), options.fuse());
    }

    /**
     * The graph compiled for {@code target} ({@code "cpu"} or {@code "cuda"}), fused or not (eager),
     * with the program's other options: compiled once per pair.
     */
    public CompiledModel model(String target, boolean fused) {
        return models.computeIfAbsent(target + (fused ? "" : ":eager"),
                k -> Compiler.compile(graph, options.withTarget(target).withFuse(fused && options.fuse())));
    }

    /**
     * {@link #model(String, boolean)} for a session being opened on the CPU: when the program had
     * compiled it already (the usual case: the program compiles for its target when made), its
     * kernels count as compile-cache hits ({@link RuntimeCounters#cacheHits}); a compile now
     * counts as compiles, as every CPU compile does. CUDA sessions count theirs in the module cache.
     */
    public CompiledModel sessionModel(String target, boolean fused) {
        CompiledModel cached = models.get(target + (fused ? "" : ":eager"));
        if (cached == null) {
            return model(target, fused);
        }
        if (target.equals("cpu")) {
            RuntimeCounters.cacheHits(cached.kernels().size());
        }
        return cached;
    }

    /** SHA-256 of the graph and the options: what every cache of compiled artefacts is keyed by. */
    public String cacheKey() {
        return model().cacheKey();
    }

    /** The input names, in graph order. */
    public List<String> inputNames() {
        return graph.inputs().stream().map(Bindings::name).toList();
    }

    /** The output value names, in graph order (the keys of {@link Session#run}'s result). */
    public List<String> outputNames() {
        return List.copyOf(graph.outputs());
    }

    /** Every input drawn from N(0, 1) by Philox under {@code seed}, of its declared type, by name. */
    public Map<String, Tensor> randomInputs(long seed) {
        Map<String, Tensor> m = new LinkedHashMap<>();
        for (Node n : graph.inputs()) {
            String name = Bindings.name(n);
            Tensor t = Tensor.allocate(n.type().contiguous());
            long key = Philox.key(seed, "input:" + name);
            for (long i = 0; i < t.numel(); i++) {
                t.set(i, Philox.normal(key, i));
            }
            m.put(name, t);
        }
        return m;
    }

    /** {@link #load(Device, Weights, RunMode)} in {@link RunMode#COMPILED} mode. */
    public Session load(Device device, Weights weights) {
        return load(device, weights, RunMode.COMPILED);
    }

    /**
     * Loads the program on {@code device}: compiles for its kind when the options named another,
     * binds every parameter from {@code weights} (read once, now) and returns a session in
     * {@code mode}. Throws {@link DeviceUnavailableException} when the device is not here,
     * {@link WeightsException} when a parameter has no value of its declared shape.
     */
    public Session load(Device device, Weights weights, RunMode mode) {
        return Lantern.backend(device).open(this, device, weights, mode);
    }
}
