package dev.lantern.onnx;

import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Gives an imported graph's outputs the ONNX graph's output names ("logits", "last_hidden_state") in place of
 * the builder's numbers, so that {@code Program.outputNames()} and a session's results speak the model's
 * names. An output keeps its number when its name is not a valid SSA name as it stands (characters outside
 * [A-Za-z0-9_.], all digits), is already taken by another value, names an input or a param, or when one value
 * is returned twice.
 */
final class OutputNames {
    private OutputNames() {}

    static Graph apply(Graph g, List<String> onnxNames) {
        Set<String> taken = new HashSet<>();
        for (Node n : g.nodes()) {
            taken.add(n.name());
        }
        Map<String, String> rename = new HashMap<>();
        for (int i = 0; i < onnxNames.size(); i++) {
            String from = g.outputs().get(i);
            String to = onnxNames.get(i);
            Node def = g.node(from);
            boolean source = def == null || def.op() == Op.INPUT || def.op() == Op.PARAM;
            if (source || rename.containsKey(from) || taken.contains(to) || !valid(to)) {
                continue;
            }
            rename.put(from, to);
            taken.add(to);
        }
        if (rename.isEmpty()) {
            return g;
        }
        List<Node> nodes = new ArrayList<>(g.nodes().size());
        for (Node n : g.nodes()) {
            Node m = n.withInputs(n.inputs().stream().map(v -> rename.getOrDefault(v, v)).toList());
            nodes.add(rename.containsKey(n.name()) ? m.withName(rename.get(n.name())) : m);
        }
        return new Graph(g.name(), nodes, g.outputs().stream().map(v -> rename.getOrDefault(v, v)).toList());
    }

    private static boolean valid(String s) {
        return !s.isEmpty() && !s.chars().allMatch(Character::isDigit)
                && s.chars().allMatch(ch -> Character.isLetterOrDigit(ch) && ch < 128 || ch == '_' || ch == '.');
    }
}
