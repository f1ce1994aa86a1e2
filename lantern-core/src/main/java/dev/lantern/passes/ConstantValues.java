package dev.lantern.passes;

import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.tensor.Tensor;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * The values of a graph's constant tensors, for the recognition rules that must read a table (a
 * causal mask, RoPE's cos and sin) rather than guess it from a shape. A {@code constant} node is
 * always known; a {@code param} is known when the source has its value: an importer that folded
 * the table knows it, a graph read from IR text does not (its rules then match nothing that needs
 * a table). Values are row-major doubles of the node's declared shape; a table larger than
 * {@link #MAX_ELEMENTS} is not read (no mask or rotary table is that large, and reading a weight
 * matrix to find out costs its size).
 */
public final class ConstantValues {
    /** No param values: only {@code constant} nodes are known. */
    public static final ConstantValues NONE = new ConstantValues(Map.of());

    static final long MAX_ELEMENTS = 1L << 24;

    private final Map<String, Tensor> params;
    private final Map<String, double[]> cache = new HashMap<>();

    private ConstantValues(Map<String, Tensor> params) {
        this.params = params;
    }

    /** Param values by param name (the {@code name} attribute), as an importer holds them. */
    public static ConstantValues of(Map<String, Tensor> paramsByName) {
        return new ConstantValues(Map.copyOf(paramsByName));
    }

    /** The value of {@code n} as row-major doubles of its shape, or {@code null} when unknown or too large. */
    double[] of(Node n) {
        if (n == null || n.type().shape().numel() > MAX_ELEMENTS || !n.type().dtype().isFloating()) {
            return null;
        }
        if (n.op() == Op.CONSTANT) {
            double[] v = new double[(int) n.type().shape().numel()];
            Arrays.fill(v, n.attrs().getDouble("value", Double.NaN));
            return v;
        }
        if (n.op() != Op.PARAM) {
            return null;
        }
        String name = n.attrs().getString("name", n.name());
        Tensor t = params.get(name);
        if (t == null || !t.shape().equals(n.type().shape())) {
            return null;
        }
        return cache.computeIfAbsent(name, k -> t.toDoubles());
    }

    /** The value of a one-element constant or param, or {@code null}. */
    Double scalar(Node n) {
        if (n == null || n.type().shape().numel() != 1) {
            return null;
        }
        double[] v = of(n);
        return v == null ? null : v[0];
    }
}
