package dev.lantern.ir;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A model graph in SSA form: nodes in a valid order (every input defined above its use) and the
 * names of the returned values. Immutable. The text format is {@link IrPrinter}'s.
 */
public final class Graph {
    private final String name;
    private final List<Node> nodes;
    private final List<String> outputs;
    private final Map<String, Node> byName;

    public Graph(String name, List<Node> nodes, List<String> outputs) {
        this.name = name;
        this.nodes = List.copyOf(nodes);
        this.outputs = List.copyOf(outputs);
        Map<String, Node> m = new HashMap<>();
        for (Node n : this.nodes) {
            if (m.put(n.name(), n) != null) {
                throw new IllegalArgumentException("value %" + n.name() + " is defined twice");
            }
        }
        this.byName = m;
    }

    public String name() {
        return name;
    }

    public List<Node> nodes() {
        return nodes;
    }

    public List<String> outputs() {
        return outputs;
    }

    /** The node defining {@code value}, or {@code null}. */
    public Node node(String value) {
        return byName.get(value);
    }

    public TensorType type(String value) {
        return byName.get(value).type();
    }

    public List<TensorType> inputTypes(Node n) {
        List<TensorType> t = new ArrayList<>(n.inputs().size());
        for (String in : n.inputs()) {
            t.add(type(in));
        }
        return t;
    }

    public List<Node> inputs() {
        return nodes.stream().filter(n -> n.op() == Op.INPUT).toList();
    }

    public List<Node> params() {
        return nodes.stream().filter(n -> n.op() == Op.PARAM).toList();
    }

    /** Nodes that compute something (neither source nor constant). */
    public List<Node> computeNodes() {
        return nodes.stream().filter(n -> !n.op().isSource()).toList();
    }

    /** For each value, the nodes that read it, in graph order. */
    public Map<String, List<Node>> users() {
        Map<String, List<Node>> u = new LinkedHashMap<>();
        for (Node n : nodes) {
            u.putIfAbsent(n.name(), new ArrayList<>());
            for (String in : n.inputs()) {
                u.computeIfAbsent(in, k -> new ArrayList<>()).add(n);
            }
        }
        return u;
    }

    public Graph withNodes(List<Node> newNodes, List<String> newOutputs) {
        return new Graph(name, newNodes, newOutputs);
    }

    /** This graph with SSA names renumbered %0, %1, ... in order: the form that {@link GraphHash} hashes. */
    public Graph renumbered() {
        Map<String, String> rename = new HashMap<>();
        List<Node> out = new ArrayList<>(nodes.size());
        for (Node n : nodes) {
            String fresh = Integer.toString(rename.size());
            List<String> ins = n.inputs().stream().map(rename::get).toList();
            rename.put(n.name(), fresh);
            out.add(n.withName(fresh).withInputs(ins));
        }
        return new Graph(name, out, outputs.stream().map(rename::get).toList());
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Graph g && name.equals(g.name) && nodes.equals(g.nodes) && outputs.equals(g.outputs);
    }

    @Override
    public int hashCode() {
        return nodes.hashCode();
    }

    @Override
    public String toString() {
        return IrPrinter.print(this);
    }
}
