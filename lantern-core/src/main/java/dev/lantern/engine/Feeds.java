package dev.lantern.engine;

import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The tensors fed to a graph's inputs: seeded random ones for tests, demos and benchmarks (the
 * same seed gives the same values on every backend), and feeds converted to the dtypes a graph
 * declares (the unfused or autocast graph may declare other dtypes than the caller holds).
 */
public final class Feeds {
    private Feeds() {
    }

    /** Every graph input drawn from N(0, 1) by Philox under {@code seed}, keyed by name. */
    public static Map<String, Tensor> inputs(Graph g, long seed) {
        Map<String, Tensor> m = new LinkedHashMap<>();
        for (Node n : g.nodes()) {
            if (n.op() == Op.INPUT) {
                String name = n.attrs().getString("name", n.name());
                Tensor t = Tensor.allocate(n.type());
                long key = Philox.key(seed, "input:" + name);
                for (long i = 0; i < t.numel(); i++) {
                    t.set(i, Philox.normal(key, i));
                }
                m.put(name, t);
            }
        }
        return m;
    }

    /**
     * Inputs of a language model: every input, by its bound name, holds token ids drawn uniformly in
     * [0, vocab) from {@code seed}, except masks (named "...mask...": all ones) and token types
     * ("token_type..."): all zeros), in the dtype the graph declares.
     */
    public static Map<String, Tensor> tokens(Graph g, long vocab, long seed) {
        Map<String, Tensor> m = new LinkedHashMap<>();
        for (Node n : g.inputs()) {
            String name = n.attrs().getString("name", n.name());
            Tensor t = Tensor.allocate(dev.lantern.ir.DType.I64, n.type().shape());
            long key = Philox.key(seed, "input:" + name);
            for (long i = 0; i < t.numel(); i++) {
                long v = name.contains("mask") ? 1 : name.startsWith("token_type") ? 0
                        : Math.min(vocab - 1, (long) (Philox.uniform(key, i) * vocab));
                t.segment().setAtIndex(java.lang.foreign.ValueLayout.JAVA_LONG, i, v);
            }
            m.put(name, t.dtype() == n.type().dtype() ? t : t.cast(n.type().dtype()));
        }
        return m;
    }

    /** The feeds with every input and parameter converted to the dtype {@code g} declares for it. */
    public static Map<String, Tensor> declared(Graph g, Map<String, Tensor> feeds) {
        Map<String, Tensor> m = new HashMap<>(feeds);
        for (Node n : g.nodes()) {
            if (n.op() == Op.INPUT || n.op() == Op.PARAM) {
                String name = n.attrs().getString("name", n.name());
                Tensor t = feeds.get(name);
                if (t != null && t.dtype() != n.type().dtype()) {
                    m.put(name, t.cast(n.type().dtype()));
                }
            }
        }
        return m;
    }
}
