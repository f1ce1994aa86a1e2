package dev.lantern.frontend;

import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.tensor.Tensor;

import java.util.LinkedHashMap;
import java.util.Map;

/** A graph with its parameters' initialisers. {@link #parameters(long)} materialises the weights for a seed. */
public record Model(Graph graph, Map<String, ParamInit> inits) {
    public Model {
        inits = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(inits));
    }

    /** Parameter tensors by name, in graph order, drawn from {@code seed}. */
    public Map<String, Tensor> parameters(long seed) {
        Map<String, Tensor> p = new LinkedHashMap<>();
        for (Node n : graph.params()) {
            String name = n.attrs().getString("name", n.name());
            ParamInit init = inits.getOrDefault(name, ParamInit.normal(0.02f));
            p.put(name, init.fill(Tensor.allocate(n.type()), seed, name));
        }
        return p;
    }
}
