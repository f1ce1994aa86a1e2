package dev.lantern.passes;

import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;

import java.util.List;
import java.util.Map;

/**
 * What a rule may ask about the graph around the node it looks at: producers, users, whether a
 * value is returned, and fresh SSA names for the nodes it builds.
 */
public final class RewriteContext {
    private final Graph graph;
    private final Map<String, List<Node>> users;
    private final NameSource names;

    RewriteContext(Graph graph, NameSource names) {
        this.graph = graph;
        this.users = graph.users();
        this.names = names;
    }

    public Graph graph() {
        return graph;
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

    public List<Node> users(String value) {
        return users.getOrDefault(value, List.of());
    }

    /** Whether {@code value} is read only by {@code reader} (once) and is not a graph output. */
    public boolean onlyUsedBy(String value, Node reader) {
        List<Node> u = users(value);
        return !graph.outputs().contains(value) && u.size() == 1 && u.getFirst().name().equals(reader.name())
                && reader.inputs().stream().filter(value::equals).count() == 1;
    }

    public boolean isOutput(String value) {
        return graph.outputs().contains(value);
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
