package dev.lantern;

import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.LanternException;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.TensorType;
import dev.lantern.tensor.Tensor;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The values a backend binds, checked once the same way on every backend: every parameter from
 * the {@link Weights}, every input from the caller's map, each of the declared shape and
 * converted to the declared dtype. Keys are the graph's names ({@code name="..."}, else the value).
 */
public final class Bindings {
    private Bindings() {}

    /** The name a source node is bound by. */
    public static String name(Node n) {
        return n.attrs().getString("name", n.name());
    }

    /** Every parameter of {@code g}, resolved and converted to its declared dtype, by name. */
    public static Map<String, Tensor> parameters(Graph g, Weights weights) {
        Map<String, Tensor> out = new LinkedHashMap<>();
        for (Node n : g.params()) {
            String name = name(n);
            out.put(name, typed(weights.resolve(name, n.type().contiguous()), n.type().dtype()));
        }
        return out;
    }

    /** Every input of {@code g} from {@code given}, checked and converted, by name; extra names are an error. */
    public static Map<String, Tensor> inputs(Graph g, Map<String, Tensor> given) {
        Map<String, Tensor> out = new LinkedHashMap<>();
        for (Node n : g.inputs()) {
            String name = name(n);
            Tensor t = given.get(name);
            if (t == null) {
                throw new LanternException("no value for input '" + name + "' (" + n.type() + ")");
            }
            if (!t.shape().equals(n.type().shape())) {
                throw new LanternException("input '" + name + "': the graph declares " + n.type().dtype() + n.type().shape()
                        + ", given " + t.dtype() + t.shape());
            }
            out.put(name, typed(t, n.type().dtype()));
        }
        for (String k : given.keySet()) {
            if (!out.containsKey(k)) {
                throw new LanternException("no input named '" + k + "' (the graph's inputs: " + out.keySet() + ")");
            }
        }
        return out;
    }

    private static Tensor typed(Tensor t, DType declared) {
        return t.dtype() == declared ? t : t.cast(declared);
    }

    /** Whether {@code n} is a graph input (not a parameter or constant). */
    static boolean isInput(Node n) {
        return n.op() == Op.INPUT;
    }
}
