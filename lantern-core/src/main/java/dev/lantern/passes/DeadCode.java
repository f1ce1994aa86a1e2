package dev.lantern.passes;

import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Dead-code elimination: mark every value reachable backwards from the outputs, keep the marked
 * nodes in their order. Inputs are kept even when unused, because they are the graph's signature
 * (a caller binds them by name); an unused parameter goes (autocast replaces an f32 parameter by
 * its bf16 twin, and binding ignores weights that the graph no longer reads).
 */
final class DeadCode {
    private DeadCode() {}

    static Graph eliminate(Graph g) {
        Set<String> live = new HashSet<>(g.outputs());
        List<Node> nodes = g.nodes();
        for (int i = nodes.size() - 1; i >= 0; i--) {
            Node n = nodes.get(i);
            if (live.contains(n.name())) {
                live.addAll(n.inputs());
            }
        }
        List<Node> kept = new ArrayList<>();
        for (Node n : nodes) {
            if (live.contains(n.name()) || n.op() == Op.INPUT) {
                kept.add(n);
            }
        }
        return kept.size() == nodes.size() ? g : g.withNodes(kept, g.outputs());
    }
}
