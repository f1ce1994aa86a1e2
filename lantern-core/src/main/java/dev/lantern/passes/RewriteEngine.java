package dev.lantern.passes;

import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.TypeException;
import dev.lantern.ir.VerifyException;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Applies a table of rules to a fixed point. Algorithm: a worklist of nodes ordered by their place
 * in the graph, at first every node. Take the topmost; try the rules in table order; on the first
 * rewrite, splice the replacement in place of the node, drop the producers that it left without a
 * reader, and put back on the list every node near the change (the new nodes, the values whose
 * readers changed, and two levels of their readers), so that the next node tried is the topmost one
 * whose match may have changed, as a restart from the top would find it. When the list is empty,
 * one more sweep over every node confirms the fixed point (and catches a match further from the
 * change than the neighbourhood reaches). Each rewrite costs the size of its neighbourhood, not of
 * the graph, so a chain of n fusible ops takes O(n log n), where rebuilding the graph and
 * eliminating dead code after every rewrite took O(n²).
 *
 * <p>Every rewrite must keep the replaced node's type, so users stay valid; a rule that breaks this
 * is a bug reported with the rule's and the pass's names. A bound on the number of rewrites turns
 * a rule table that cycles into an error rather than a hang.
 */
public final class RewriteEngine {
    private RewriteEngine() {}

    /** Readers beyond this many are not re-queued one by one; the confirming sweep covers them. */
    private static final int FAN_OUT = 16;

    public static Graph run(String pass, Graph g, List<Rule> rules) {
        WorkGraph w = new WorkGraph(DeadCode.eliminate(g));
        RewriteContext cx = new RewriteContext(w, new RewriteContext.NameSource(g));
        long limit = 64 + 16L * g.nodes().size();
        long rewrites = 0;
        TreeSet<Long> work = new TreeSet<>(w.keys());
        while (true) {
            long before = rewrites;
            while (!work.isEmpty()) {
                Node n = w.at(work.pollFirst());
                if (n != null && tryRules(pass, n, rules, cx, w, work)) {
                    if (++rewrites > limit) {
                        throw new PassException(pass, null, "rules did not reach a fixed point after " + limit + " rewrites");
                    }
                }
            }
            if (rewrites == before) {
                break;
            }
            work.addAll(w.keys()); // the confirming sweep
        }
        return rewrites == 0 ? g : DeadCode.eliminate(w.toGraph());
    }

    /** Tries each rule on {@code n}; applies the first rewrite. Returns whether one applied. */
    private static boolean tryRules(String pass, Node n, List<Rule> rules, RewriteContext cx, WorkGraph w, TreeSet<Long> work) {
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
            Set<String> changed = new HashSet<>();
            int epoch = w.renumbers();
            if (rw.alias() != null) {
                alias(pass, r, w, n, rw.alias(), changed);
            } else {
                Node last = rw.nodes().getLast();
                if (!last.name().equals(n.name()) || !last.type().dtype().equals(n.type().dtype())
                        || !last.type().shape().equals(n.type().shape())) {
                    throw new PassException(pass, n, "rule " + r.name() + " replaced the node with " + last
                            + ", which does not keep its name and type");
                }
                if (rw.nodes().size() == 1 && last.equals(n)) {
                    continue; // a rule that returns the node unchanged does not count as a match
                }
                splice(pass, r, w, n, rw.nodes(), changed);
            }
            if (w.renumbers() != epoch) { // the splice spread the keys out: move the queued ones along
                List<Long> queued = List.copyOf(work);
                work.clear();
                for (Long k : queued) {
                    Long m = w.moved().get(k);
                    if (m != null) {
                        work.add(m);
                    }
                }
            }
            for (String v : changed) {
                requeue(w, v, work);
            }
            return true;
        }
        return false;
    }

    /** Replaces {@code n} by {@code nodes} (the last keeps its name), then drops what died. */
    private static void splice(String pass, Rule r, WorkGraph w, Node n, List<Node> nodes, Set<String> changed) {
        for (Node m : nodes.subList(0, nodes.size() - 1)) {
            if (w.node(m.name()) != null) {
                throw new PassException(pass, n, "rule " + r.name() + " added %" + m.name() + ", which the graph already defines");
            }
        }
        w.insertAbove(n.name(), nodes.subList(0, nodes.size() - 1));
        w.replace(n, nodes.getLast());
        for (Node m : nodes) {
            long k = w.key(m.name());
            for (String in : m.inputs()) {
                Long ik = w.key(in);
                if (ik == null || ik >= k) {
                    throw new VerifyException(pass + " (rule " + r.name() + ")", m, "input %" + in + " is not defined above this node");
                }
                changed.add(in);
            }
            changed.add(m.name());
        }
        changed.addAll(n.inputs());
        dropDead(w, n.inputs(), changed);
    }

    /** Removes {@code n}; every use of it (outputs too) reads {@code alias} instead. */
    private static void alias(String pass, Rule r, WorkGraph w, Node n, String alias, Set<String> changed) {
        Long ak = w.key(alias);
        for (Node u : w.users(n.name())) {
            if (ak == null || ak >= w.key(u.name())) {
                throw new VerifyException(pass + " (rule " + r.name() + ")", u, "input %" + alias + " is not defined above this node");
            }
            w.replace(u, u.withInputs(u.inputs().stream().map(v -> v.equals(n.name()) ? alias : v).toList()));
            changed.add(u.name());
        }
        w.replaceOutput(n.name(), alias);
        w.remove(n);
        changed.add(alias);
        changed.addAll(n.inputs());
        dropDead(w, n.inputs(), changed);
    }

    /** Removes the values among {@code candidates} that nothing reads any more, and so on upwards. */
    private static void dropDead(WorkGraph w, List<String> candidates, Set<String> changed) {
        List<String> stack = new ArrayList<>(candidates);
        while (!stack.isEmpty()) {
            String v = stack.removeLast();
            if (w.isDead(v)) {
                Node d = w.node(v);
                w.remove(d);
                changed.remove(v);
                changed.addAll(d.inputs());
                stack.addAll(d.inputs());
            }
        }
    }

    /** Queues {@code v} and two levels of its readers (those whose match may depend on v). */
    private static void requeue(WorkGraph w, String v, TreeSet<Long> work) {
        Long k = w.key(v);
        if (k == null) {
            return;
        }
        work.add(k);
        if (w.distinctUsers(v) > FAN_OUT) {
            return;
        }
        for (Node u : w.users(v)) {
            work.add(w.key(u.name()));
            if (w.distinctUsers(u.name()) <= FAN_OUT) {
                w.users(u.name()).forEach(x -> work.add(w.key(x.name())));
            }
        }
    }
}
