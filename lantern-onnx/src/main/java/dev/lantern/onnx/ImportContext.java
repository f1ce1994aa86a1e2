package dev.lantern.onnx;

import dev.lantern.frontend.GraphBuilder;
import dev.lantern.frontend.Value;
import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Tensor;
import onnx.Onnx.NodeProto;

import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The state of one import: the graph under construction, what each ONNX value name stands for, the weights
 * materialised so far, and the node being imported (for error messages). Op importers read their inputs and
 * write their outputs through it.
 */
final class ImportContext {
    final GraphBuilder builder;
    final ImportLimits limits;
    final int opset;
    final HostOps fold;
    private final TensorDecoder decoder;
    private final Map<String, Val> values = new HashMap<>();
    private final Map<String, Value> materialised = new HashMap<>();
    private final Map<String, Tensor> params = new LinkedHashMap<>();
    private final java.util.Set<String> ssaNames = new java.util.HashSet<>();
    private final Map<onnx.Onnx.TensorProto, HostTensor> decoded = new java.util.IdentityHashMap<>();
    private NodeProto node;

    ImportContext(GraphBuilder builder, ImportLimits limits, int opset, TensorDecoder decoder) {
        this.builder = builder;
        this.limits = limits;
        this.opset = opset;
        this.decoder = decoder;
        this.fold = new HostOps(limits.maxFoldElements());
    }

    void at(NodeProto n) {
        node = n;
    }

    NodeProto node() {
        return node;
    }

    Map<String, Tensor> params() {
        return params;
    }

    /** An error about the current node: its name, op type and the model's opset come first. */
    OnnxImportException fail(String message) {
        return new OnnxImportException(where() + ": " + message);
    }

    String where() {
        if (node == null) {
            return "graph";
        }
        return "node '" + node.getName() + "' (" + (node.getDomain().isEmpty() ? "" : node.getDomain() + ".")
                + node.getOpType() + ", opset " + opset + ")";
    }

    // --- inputs and outputs of the current node

    /** Input {@code i}'s name, or "" when absent (ONNX marks skipped optional inputs with ""). */
    String inputName(int i) {
        return i < node.getInputCount() ? node.getInput(i) : "";
    }

    boolean hasInput(int i) {
        return !inputName(i).isEmpty();
    }

    String requireInput(int i) {
        String name = inputName(i);
        if (name.isEmpty()) {
            throw fail("input " + i + " is required");
        }
        return name;
    }

    void define(String name, Val v) {
        if (!name.isEmpty()) {
            values.put(name, v);
        }
    }

    boolean isDefined(String name) {
        return values.containsKey(name);
    }

    void output(int i, Value v) {
        if (i < node.getOutputCount()) {
            define(node.getOutput(i), new Val.Run(v));
        }
    }

    void output(int i, HostTensor t) {
        if (t.numel() > limits.maxFoldElements()) {
            throw fail("a folded value of shape " + Arrays.toString(t.dims()) + " is too large to compute at import time");
        }
        if (i < node.getOutputCount()) {
            define(node.getOutput(i), new Val.Host(t));
        }
    }

    Val val(String name) {
        Val v = values.get(name);
        if (v == null) {
            throw fail("reads '" + name + "', which no input, initializer or earlier node defines (nodes out of order, or a cycle)");
        }
        return v;
    }

    /** Whether input {@code i} is known at import time. */
    boolean isHost(int i) {
        return hasInput(i) && !(val(inputName(i)) instanceof Val.Run);
    }

    /**
     * Whether input {@code i} is known at import time AND small enough to compute with there
     * ({@code maxFoldElements}): a large weight (a tied LM head read through a Transpose) stays a
     * parameter and the op runs on it at run time instead of being refused.
     */
    boolean foldable(int i) {
        if (!isHost(i)) {
            return false;
        }
        long n = 1;
        for (long d : dimsOf(i)) {
            n = Math.multiplyExact(n, Math.max(d, 0));
        }
        return n <= limits.maxFoldElements();
    }

    boolean allHost() {
        for (int i = 0; i < node.getInputCount(); i++) {
            if (hasInput(i) && !isHost(i)) {
                return false;
            }
        }
        return true;
    }

    /** Input {@code i}'s value at import time; a typed error when it is only known at run time. */
    HostTensor host(int i) {
        String name = requireInput(i);
        return switch (val(name)) {
            case Val.Host h -> h.tensor();
            case Val.Weight w -> hostOf(w.proto());
            case Val.Run r -> throw fail("input " + i + " ('" + name + "') must be known at import time (a constant or static shape arithmetic)");
        };
    }

    /** The value of a tensor attribute, checked as an initializer is. */
    HostTensor hostOf(onnx.Onnx.TensorProto t) {
        HostTensor h = decoded.get(t);
        if (h == null) {
            h = decoder.host(t); // decoded once: a weight read by many folds costs its size once
            decoded.put(t, h);
        }
        return h;
    }

    /** Input {@code i} as a tensor of the Lantern graph: host values and weights become params or scalar constants. */
    Value run(int i) {
        return run(requireInput(i));
    }

    Value run(String name) {
        Val v = val(name);
        if (v instanceof Val.Run r) {
            return r.value();
        }
        Value done = materialised.get(name);
        if (done != null) {
            return done;
        }
        Value made = switch (v) {
            case Val.Weight w -> param(w.proto().getName().isEmpty() ? name : w.proto().getName(), decoder.tensor(w.proto()));
            case Val.Host h -> hostToGraph(name, h.tensor());
            case Val.Run r -> r.value();
        };
        materialised.put(name, made);
        return made;
    }

    /** The shape of input {@code i}, without materialising a weight or a host value. */
    long[] dimsOf(int i) {
        String name = requireInput(i);
        return switch (val(name)) {
            case Val.Run r -> dims(r.value().shape());
            case Val.Host h -> h.tensor().dims();
            case Val.Weight w -> decoder.dims(w.proto());
        };
    }

    /** {@code axis} (negative counts from the end) checked against {@code rank}. */
    int axis(long axis, int rank) {
        long a = axis < 0 ? axis + rank : axis;
        if (a < 0 || a >= rank) {
            throw fail("axis " + axis + " is out of range for rank " + rank);
        }
        return (int) a;
    }

    /** A host value made at import (not an ONNX value) as a run-time tensor, named after the node and {@code role}. */
    Value runHost(String role, HostTensor t) {
        return hostToGraph((node.getName().isEmpty() ? node.getOutput(0) : node.getName()) + "." + role, t);
    }

    private Value hostToGraph(String name, HostTensor t) {
        DType d = OnnxTypes.dtype(t.elemType());
        if (d == null) {
            throw fail("constant '" + name + "' of type " + OnnxTypes.name(t.elemType()) + " cannot be a run-time tensor");
        }
        if (t.numel() == 1) {
            Value c = builder.constant(t.values()[0], d);
            return t.rank() == 0 ? c : builder.reshape(c, shape(t.dims()).dims());
        }
        Tensor data = Tensor.allocate(d, shape(t.dims()));
        for (int k = 0; k < t.values().length; k++) {
            data.set(k, (float) t.values()[k]);
        }
        return param("const." + name, data);
    }

    /**
     * A param for {@code data}, named after its initializer. The name is made unique as the SSA name it becomes:
     * GraphBuilder maps characters outside [A-Za-z0-9_.] to '_', and an all-digit name would clash with the
     * numbered values, so it gains a "w" in front.
     */
    private Value param(String name, Tensor data) {
        String base = name.chars().allMatch(Character::isDigit) ? "w" + name : name;
        String unique = base;
        for (int k = 1; params.containsKey(unique) || !ssaNames.add(ssa(unique)); k++) {
            unique = base + "." + k;
        }
        params.put(unique, data);
        // the data travels in the imported model's params; the init is never drawn
        return builder.param(unique, data.type(), dev.lantern.frontend.ParamInit.normal(0f));
    }

    private static String ssa(String s) {
        StringBuilder b = new StringBuilder();
        for (char ch : s.toCharArray()) {
            b.append(Character.isLetterOrDigit(ch) || ch == '_' || ch == '.' ? ch : '_');
        }
        return b.toString();
    }

    /** Defines graph input {@code name}; a typed error when its SSA name is already taken. */
    Value input(String name, dev.lantern.ir.TensorType type) {
        if (!ssaNames.add(ssa(name)) || ssa(name).chars().allMatch(Character::isDigit)) {
            throw new OnnxImportException("input '" + name + "' clashes with another value's name once sanitised (" + ssa(name) + ")");
        }
        return builder.input(name, type);
    }

    /** Appends a Lantern op. */
    Value op(Op op, Attrs attrs, Value... in) {
        return builder.op(op, attrs, in);
    }

    /** A checked Lantern shape from ONNX dims. */
    Shape shape(long[] dims) {
        TensorDecoder.checkShape(dims, limits, where() + ": shape");
        return Shape.of(Arrays.stream(dims).mapToInt(Math::toIntExact).toArray());
    }

    static long[] dims(Shape s) {
        return Arrays.stream(s.dims()).asLongStream().toArray();
    }
}
