package dev.lantern.passes;

import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.TensorType;

import java.util.List;

/**
 * What a rule may ask about the graph around the node it looks at: producers, users, whether a
 * value is returned, and fresh SSA names for the nodes it builds.
 */
public final class RewriteContext {
    private final WorkGraph graph;
    private final NameSource names;

    RewriteContext(WorkGraph graph, NameSource names) {
        this.graph = graph;
        this.names = names;
    }

    /** The type of {@code value}. */
    public TensorType type(String value) {
        return graph.node(value).type();
    }

    /** The node that defines {@code value}. */
    public Node producer(String value) {
        return graph.node(value);
    }

    /** The node that defines input {@code i} of {@code n}. */
    public Node in(Node n, int i) {
        return i < n.inputs().size() ? graph.node(n.input(i)) : null;
    }

    /** Input {@code i}'s producer when it has op {@code op}, else {@code null}. */
    public Node in(Node n, int i, Op op) {
        Node p = in(n, i);
        return p != null && p.op() == op ? p : null;
    }

    /** The readers of {@code value}, in graph order. */
    public List<Node> users(String value) {
        return graph.users(value);
    }

    /** Whether {@code value} is read only by {@code reader} (once) and is not a graph output. */
    public boolean onlyUsedBy(String value, Node reader) {
        return !graph.isOutput(value) && graph.distinctUsers(value) == 1 && graph.reads(value, reader.name()) == 1;
    }

    public boolean isOutput(String value) {
        return graph.isOutput(value);
    }

    /** The first node above {@code n} that has its op, inputs, attributes and type: a common subexpression. */
    public Node earlierTwin(Node n) {
        return graph.earlierTwin(n);
    }

    /** A name not used anywhere in the graph. */
    public String fresh() {
        return names.next();
    }

    /** Fresh names {@code t0, t1, ...}, skipping any the graph already has. */
    static final class NameSource {
        private final java.util.Set<String> taken = new java.util.HashSet<>();
        private int next;

        NameSource(Graph g) {
            g.nodes().forEach(n -> taken.add(n.name()));
        }

        String next() {
            String s;
            do {
                s = "t" + next++;
            } while (!taken.add(s));
            return s;
        }
    }
}
