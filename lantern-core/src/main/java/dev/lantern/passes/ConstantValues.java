package dev.lantern.passes;

import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.tensor.Tensor;

import java.util.Map;

/**
 * The values of a graph's constant tensors, for the recognition rules that must read a table (a
 * causal mask, RoPE's cos and sin) rather than guess it from a shape. A {@code constant} node is
 * always known; a {@code param} is known when the source has its value: an importer that folded
 * the table knows it, a graph read from IR text does not (its rules then match nothing that needs
 * a table). Tables are read in place, element by element (a batch-8, 2048-token causal mask is
 * 33.5M elements: no copy of it is made), and rules ask only for the operands in a pattern's
 * table positions, stopping at the first element that does not fit.
 */
public final class ConstantValues {
    /** No param values: only {@code constant} nodes are known. */
    public static final ConstantValues NONE = new ConstantValues(Map.of());

    /** The elements of a known constant in row-major order of its node's shape. */
    interface Table {
        long size();

        double at(long i);
    }

    private final Map<String, Tensor> params;

    private ConstantValues(Map<String, Tensor> params) {
        this.params = params;
    }

    /** Param values by param name (the {@code name} attribute), as an importer holds them. */
    public static ConstantValues of(Map<String, Tensor> paramsByName) {
        return new ConstantValues(Map.copyOf(paramsByName));
    }

    /** The value of {@code n}, or {@code null} when it is not a known floating constant of its declared shape. */
    Table of(Node n) {
        if (n == null || !n.type().dtype().isFloating()) {
            return null;
        }
        long size = n.type().shape().numel();
        if (n.op() == Op.CONSTANT) {
            double v = n.attrs().getDouble("value", Double.NaN);
            return new Table() {
                public long size() {
                    return size;
                }

                public double at(long i) {
                    return v;
                }
            };
        }
        Tensor t = n.op() == Op.PARAM ? params.get(n.attrs().getString("name", n.name())) : null;
        if (t == null || !t.shape().equals(n.type().shape()) || !t.dtype().isFloating()) {
            return null;
        }
        return new Table() {
            public long size() {
                return size;
            }

            public double at(long i) {
                return t.get(i);
            }
        };
    }

    /** The value of a one-element constant or param, or {@code null}. */
    Double scalar(Node n) {
        Table t = n == null || n.type().shape().numel() != 1 ? null : of(n);
        return t == null ? null : t.at(0);
    }
}
