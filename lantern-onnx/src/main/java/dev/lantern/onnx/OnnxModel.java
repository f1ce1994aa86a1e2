package dev.lantern.onnx;

import dev.lantern.Bindings;
import dev.lantern.Lantern;
import dev.lantern.Program;
import dev.lantern.Weights;
import dev.lantern.engine.CompileOptions;
import dev.lantern.ir.LanternException;
import dev.lantern.ir.Node;
import onnx.Onnx.AttributeProto;
import onnx.Onnx.GraphProto;
import onnx.Onnx.ModelProto;
import onnx.Onnx.NodeProto;
import onnx.Onnx.TensorProto;
import onnx.Onnx.TensorShapeProto;
import onnx.Onnx.ValueInfoProto;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * An ONNX model opened once, compiled once per concrete input shape. ONNX models declare symbolic dims
 * ({@code batch}, {@code sequence}); Lantern's graphs have static shapes, so each shape set is its own
 * import and compilation. The file is read once, at {@link #open}; {@link #compile} imports and compiles
 * for the shapes given the first time they are asked for and returns the same {@link Compiled} (the same
 * {@link Program} object) afterwards: the cache is keyed by the concrete shape of every input and by
 * the {@link CompileOptions}.
 *
 * <pre>{@code
 * OnnxModel model = OnnxModel.open(Path.of("gpt2.onnx"), CompileOptions.defaults());
 * OnnxModel.Compiled c = model.compile(Map.of("input_ids", new long[] {1, 128}));
 * try (Session s = c.program().load(Device.cpu(), c.weights())) {
 *     Map<String, Tensor> out = s.run(Map.of("input_ids", ids));
 * }
 * }</pre>
 *
 * Thread-safe: two threads asking for one shape get one compilation; different shapes compile in
 * parallel. The cache holds the {@link #cacheLimit()} most recently compiled shape sets (32 unless
 * {@link #limitCache} says otherwise; the oldest goes first, and programs already handed out stay
 * usable) until {@link #clear()}; each entry holds its own copy of the weights (an import decodes them). Failures are {@link OnnxImportException}s (the model)
 * or the compiler's typed {@link LanternException}s, and are not cached.
 */
public final class OnnxModel {
    private final String source;
    private final ModelProto proto;
    private final Path folder;
    private final ImportLimits limits;
    private final CompileOptions options;
    private final int opset;
    private final List<OnnxInput> inputs;
    private final List<String> outputNames;
    private final Map<Key, Future<Compiled>> cache = new ConcurrentHashMap<>();
    /** Cache keys in the order they were first compiled: the eviction order. */
    private final java.util.concurrent.ConcurrentLinkedQueue<Key> order = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private volatile int cacheLimit = DEFAULT_CACHE_LIMIT;
    private final AtomicInteger compilations = new AtomicInteger();

    /** Shape sets a model keeps compiled unless {@link #limitCache} says otherwise. */
    public static final int DEFAULT_CACHE_LIMIT = 32;

    /**
     * A model imported and compiled for one shape set.
     *
     * @param program the compiled program, to {@code load} on any device
     * @param weights the model's initializers (and constants folded at import) by parameter name
     * @param shapes  the concrete shape of every input, by name, in the model's order
     */
    public record Compiled(Program program, Weights weights, Map<String, long[]> shapes) {}

    /** What a cache entry is for: every input's concrete shape, as text, and the options. */
    private record Key(String shapes, CompileOptions options) {}

    private OnnxModel(String source, ModelProto proto, Path folder, ImportLimits limits, CompileOptions options) {
        this.source = source;
        this.proto = proto;
        this.folder = folder;
        this.limits = limits;
        this.options = Objects.requireNonNull(options, "options");
        this.opset = ModelLoader.opset(proto); // checks the opset and that there is a graph, before any compile
        this.inputs = declaredInputs(proto.getGraph());
        this.outputNames = proto.getGraph().getOutputList().stream().map(ValueInfoProto::getName).toList();
    }

    /**
     * Reads the model file (external data is read from the file's folder, at each import) and checks its
     * opset; an unreadable or malformed file is an {@link OnnxImportException} naming the file.
     * {@code options} are the defaults of {@link #compile(Map)}.
     */
    public static OnnxModel open(Path file, CompileOptions options) {
        if (!Files.exists(file)) {
            throw new OnnxImportException("no such file: " + file);
        }
        if (Files.isDirectory(file)) {
            throw new OnnxImportException(file + " is a folder, not an ONNX file");
        }
        ModelProto m;
        try {
            m = ModelLoader.read(file, ImportLimits.DEFAULT);
        } catch (OnnxImportException e) {
            throw e.getMessage().startsWith("cannot read") ? e : new OnnxImportException(file + ": " + e.getMessage(), e);
        }
        try {
            return new OnnxModel(file.toString(), m, file.toAbsolutePath().getParent(), ImportLimits.DEFAULT, options);
        } catch (OnnxImportException e) {
            throw new OnnxImportException(file + ": " + e.getMessage(), e);
        }
    }

    /** A model already parsed (no external data allowed: there is no folder). */
    public static OnnxModel of(ModelProto model, CompileOptions options) {
        return new OnnxModel(model.getGraph().getName().isEmpty() ? "onnx model" : model.getGraph().getName(), model, null,
                ImportLimits.DEFAULT, options);
    }

    /** The file the model came from, or the graph's name. */
    public String source() {
        return source;
    }

    /** The default-domain opset the model imports. */
    public int opset() {
        return opset;
    }

    /** The options {@link #compile(Map)} uses. */
    public CompileOptions options() {
        return options;
    }

    /** The inputs the model declares (initializers listed among the inputs excluded), in order. */
    public List<OnnxInput> inputs() {
        return inputs;
    }

    /** The model's output names, in order (the order of {@code program().outputNames()}). */
    public List<String> outputNames() {
        return outputNames;
    }

    /** {@link #compile(Map, CompileOptions, Consumer)} with the model's options and no progress report. */
    public Compiled compile(Map<String, long[]> shapes) {
        return compile(shapes, options, stage -> {});
    }

    /** {@link #compile(Map, CompileOptions, Consumer)} with no progress report. */
    public Compiled compile(Map<String, long[]> shapes, CompileOptions options) {
        return compile(shapes, options, stage -> {});
    }

    /**
     * The model imported and compiled for {@code shapes} (concrete shapes by input name; inputs whose
     * declared shape is all fixed may be left out) under {@code options}: from the cache when these
     * shapes and options were compiled before, else imported and compiled now, {@code stages} hearing
     * {@code "import"} then {@code "compile"} (for a progress line). A symbolic dim without a value, a
     * fixed dim given another value, or one symbol bound to two values is an {@link OnnxImportException}.
     */
    public Compiled compile(Map<String, long[]> shapes, CompileOptions options, Consumer<String> stages) {
        Map<String, long[]> copy = new LinkedHashMap<>();
        shapes.forEach((k, v) -> copy.put(k, v.clone()));
        Key key = new Key(canonical(copy), Objects.requireNonNull(options, "options"));
        FutureTask<Compiled> task = new FutureTask<>(() -> build(copy, options, stages));
        Future<Compiled> f = cache.putIfAbsent(key, task);
        if (f == null) {
            f = task;
            order.add(key);
            evict(key);
            task.run();
        }
        try {
            return f.get();
        } catch (ExecutionException e) {
            cache.remove(key, f); // a failure is not remembered: the same call fails again, the same way
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LanternException("interrupted while waiting for another thread's compilation of " + source);
        }
    }

    /** How many imports and compilations this model has run (cache hits do not count). */
    public int compilations() {
        return compilations.get();
    }

    /** Drops the oldest compiled shape sets beyond the limit (never {@code keep}, the one just asked for). */
    private void evict(Key keep) {
        for (int tries = order.size() + 1; cache.size() > cacheLimit && tries > 0; tries--) {
            Key oldest = order.poll();
            if (oldest == null) {
                return;
            }
            if (oldest.equals(keep)) {
                order.add(oldest); // the shape being compiled now is the newest, not the oldest
            } else {
                cache.remove(oldest);
            }
        }
    }

    /** How many compiled shape sets the cache keeps at most. */
    public int cacheLimit() {
        return cacheLimit;
    }

    /**
     * Keeps at most {@code max} (≥ 1) compiled shape sets from now on, dropping the oldest beyond it;
     * a {@link LanternException} for less than 1.
     */
    public OnnxModel limitCache(int max) {
        if (max < 1) {
            throw new LanternException("an ONNX model's compile cache keeps at least 1 shape set, not " + max);
        }
        cacheLimit = max;
        evict(null);
        return this;
    }

    /** How many shape and option sets the cache holds. */
    public int cached() {
        return cache.size();
    }

    /** Empties the cache; programs already handed out stay usable. */
    public void clear() {
        cache.clear();
        order.clear();
    }

    /**
     * The vocabulary size behind a token-id input: the first dim of the initializer that a {@code Gather}
     * (axis 0) reads with {@code input} as its indices, directly or through a {@code Cast}; empty when
     * there is no such embedding table.
     */
    public OptionalLong embeddingRows(String input) {
        GraphProto g = proto.getGraph();
        Set<String> ids = new HashSet<>(Set.of(input));
        for (NodeProto n : g.getNodeList()) { // nodes are in order, so a Cast is seen before its readers
            // the ids' own values through casts and reshapes (the dynamo exporter views them [-1] first)
            if (n.getDomain().isEmpty() && Set.of("Cast", "Identity", "Reshape", "Flatten", "Unsqueeze", "Squeeze").contains(n.getOpType())
                    && n.getInputCount() > 0 && ids.contains(n.getInput(0)) && n.getOutputCount() > 0) {
                ids.add(n.getOutput(0));
            }
        }
        for (NodeProto n : g.getNodeList()) {
            if (!n.getDomain().isEmpty() || !n.getOpType().equals("Gather") || n.getInputCount() < 2 || !ids.contains(n.getInput(1))) {
                continue;
            }
            long axis = n.getAttributeList().stream().filter(a -> a.getName().equals("axis") && a.getType() == AttributeProto.AttributeType.INT)
                    .mapToLong(AttributeProto::getI).findFirst().orElse(0);
            for (TensorProto t : g.getInitializerList()) {
                if (t.getName().equals(n.getInput(0)) && t.getDimsCount() >= 1 && (axis == 0 || axis == -t.getDimsCount())) {
                    return OptionalLong.of(t.getDims(0));
                }
            }
        }
        return OptionalLong.empty();
    }

    private Compiled build(Map<String, long[]> shapes, CompileOptions options, Consumer<String> stages) {
        compilations.incrementAndGet();
        stages.accept("import");
        ImportedModel m;
        try {
            m = OnnxImporter.importModel(proto, shapes, folder, limits);
        } catch (OnnxImportException e) {
            throw folder == null ? e : new OnnxImportException(source + ": " + e.getMessage(), e);
        }
        stages.accept("compile");
        Program p = Lantern.compile(m.graph(), options);
        Map<String, long[]> bound = new LinkedHashMap<>();
        for (Node n : p.graph().inputs()) {
            bound.put(Bindings.name(n), Arrays.stream(n.type().shape().dims()).asLongStream().toArray());
        }
        return new Compiled(p, Weights.of(m.params()), Collections.unmodifiableMap(bound));
    }

    /**
     * Every input's concrete shape as one text: the shape given, or the declared one when it is all
     * fixed (so leaving a static input out and giving its shape are one entry); names that are not
     * inputs are kept, so that the import refuses them.
     */
    private String canonical(Map<String, long[]> shapes) {
        StringBuilder b = new StringBuilder();
        for (OnnxInput in : inputs) {
            long[] s = shapes.containsKey(in.name()) ? shapes.get(in.name()) : in.staticShape();
            b.append(in.name()).append('=').append(s == null ? "?" : Arrays.toString(s)).append(';');
        }
        Map<String, long[]> extra = new TreeMap<>(shapes);
        inputs.forEach(i -> extra.remove(i.name()));
        extra.forEach((k, v) -> b.append(k).append('=').append(Arrays.toString(v)).append(';'));
        return b.toString();
    }

    private static List<OnnxInput> declaredInputs(GraphProto g) {
        Set<String> initializers = new HashSet<>();
        g.getInitializerList().forEach(t -> initializers.add(t.getName()));
        List<OnnxInput> out = new ArrayList<>();
        for (ValueInfoProto in : g.getInputList()) {
            if (initializers.contains(in.getName())) {
                continue; // IR version < 4 lists initializers among inputs
            }
            var tt = in.getType().getTensorType();
            List<OnnxInput.Dim> dims = null;
            if (tt.hasShape()) {
                dims = new ArrayList<>();
                for (TensorShapeProto.Dimension d : tt.getShape().getDimList()) {
                    dims.add(d.hasDimValue() ? new OnnxInput.Dim(d.getDimValue(), null) : new OnnxInput.Dim(0, d.getDimParam()));
                }
            }
            out.add(new OnnxInput(in.getName(), OnnxTypes.dtype(tt.getElemType()), OnnxTypes.name(tt.getElemType()), dims));
        }
        return List.copyOf(out);
    }
}
