package dev.lantern.passes;

import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.TypeException;
import dev.lantern.ir.VerifyException;

import java.util.ArrayList;
import java.util.List;

/**
 * Applies a table of rules to a fixed point. Algorithm: walk the nodes in order; at the first node
 * where some rule (tried in table order) returns a rewrite, splice the replacement in place of the
 * node, drop dead nodes, and start again from the top. Stops when a whole walk matches nothing.
 * Every rewrite must keep the replaced node's type, so users stay valid; a rule that breaks this
 * is a bug reported with the rule's and the pass's names. A bound on the number of rewrites turns
 * a rule table that cycles into an error rather than a hang.
 */
public final class RewriteEngine {
    private RewriteEngine() {}

    public static Graph run(String pass, Graph g, List<Rule> rules) {
        RewriteContext.NameSource names = new RewriteContext.NameSource(g);
        int limit = 64 + 16 * g.nodes().size();
        for (int step = 0; ; step++) {
            if (step > limit) {
                throw new PassException(pass, null, "rules did not reach a fixed point after " + limit + " rewrites");
            }
            Graph next = once(pass, g, rules, names);
            if (next == null) {
                return g;
            }
            g = DeadCode.eliminate(next);
        }
    }

    /** The graph after the first rewrite that applies, or {@code null} when none does. */
    private static Graph once(String pass, Graph g, List<Rule> rules, RewriteContext.NameSource names) {
        RewriteContext cx = new RewriteContext(g, names);
        List<Node> nodes = g.nodes();
        for (int i = 0; i < nodes.size(); i++) {
            Node n = nodes.get(i);
            for (Rule r : rules) {
                Rule.Rewrite rw;
                try {
                    rw = r.apply(n, cx);
                } catch (TypeException e) {
                    throw new PassException(pass, n, "rule " + r.name() + ": " + e.getMessage());
                }
                if (rw == null) {
                    continue;
                }
                if (rw.alias() != null) {
                    return aliased(g, n, rw.alias());
                }
                Node last = rw.nodes().getLast();
                if (!last.name().equals(n.name()) || !last.type().dtype().equals(n.type().dtype())
                        || !last.type().shape().equals(n.type().shape())) {
                    throw new PassException(pass, n, "rule " + r.name() + " replaced the node with " + last
                            + ", which does not keep its name and type");
                }
                if (rw.nodes().size() == 1 && last.equals(n)) {
                    continue; // a rule that returns the node unchanged does not count as a match
                }
                List<Node> out = new ArrayList<>(nodes.size() + rw.nodes().size());
                out.addAll(nodes.subList(0, i));
                out.addAll(rw.nodes());
                out.addAll(nodes.subList(i + 1, nodes.size()));
                Graph next = g.withNodes(out, g.outputs());
                checkDefinedBeforeUse(pass, r, next);
                return next;
            }
        }
        return null;
    }

    /** {@code g} without {@code n}, every use of it (outputs too) reading {@code alias} instead. */
    private static Graph aliased(Graph g, Node n, String alias) {
        List<Node> out = new ArrayList<>(g.nodes().size());
        for (Node m : g.nodes()) {
            if (m != n) {
                out.add(m.inputs().contains(n.name())
                        ? m.withInputs(m.inputs().stream().map(v -> v.equals(n.name()) ? alias : v).toList()) : m);
            }
        }
        List<String> outs = g.outputs().stream().map(v -> v.equals(n.name()) ? alias : v).toList();
        return g.withNodes(out, outs);
    }

    private static void checkDefinedBeforeUse(String pass, Rule r, Graph g) {
        java.util.Set<String> defined = new java.util.HashSet<>();
        for (Node n : g.nodes()) {
            for (String in : n.inputs()) {
                if (!defined.contains(in)) {
                    throw new VerifyException(pass + " (rule " + r.name() + ")", n, "input %" + in + " is not defined above this node");
                }
            }
            defined.add(n.name());
        }
    }
}
