package dev.lantern.passes;

import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The rewrite engine's private, mutable copy of a graph while it runs rules: nodes by name, their
 * order (sparse long keys, so a replacement splices in without renumbering), each value's readers
 * and an index of node signatures for common-subexpression lookups. Every edit costs O(log n) plus
 * the size of the nodes it touches, where rebuilding a {@link Graph} costs O(n); that difference is
 * what keeps a pass over a 100,000-op chain linear. Rules never see this class, only
 * {@link RewriteContext}; the {@link Graph}s that passes return stay immutable.
 */
final class WorkGraph {
    private static final long GAP = 1L << 40;

    private final String name;
    private final Map<String, Node> byName = new HashMap<>();
    private final Map<String, Long> keyOf = new HashMap<>();
    private final TreeMap<Long, Node> order = new TreeMap<>();
    /** value -> reader name -> how many of the reader's inputs are that value. */
    private final Map<String, LinkedHashMap<String, Integer>> readers = new HashMap<>();
    /** (op, inputs, attrs, type) -> keys of the nodes with that signature. */
    private final Map<Signature, TreeMap<Long, String>> twins = new HashMap<>();
    private final List<String> outputs;
    private int renumbers;
    private Map<Long, Long> moved = Map.of();

    private record Signature(Op op, List<String> inputs, Object attrs, Object type) {
        static Signature of(Node n) {
            return new Signature(n.op(), n.inputs(), n.attrs(), n.type());
        }
    }

    WorkGraph(Graph g) {
        this.name = g.name();
        this.outputs = new ArrayList<>(g.outputs());
        long k = 0;
        for (Node n : g.nodes()) {
            add(n, k += GAP);
        }
    }

    Graph toGraph() {
        return new Graph(name, List.copyOf(order.values()), outputs);
    }

    Node node(String value) {
        return byName.get(value);
    }

    Long key(String value) {
        return keyOf.get(value);
    }

    Node at(long key) {
        return order.get(key);
    }

    List<Long> keys() {
        return List.copyOf(order.keySet());
    }

    boolean isOutput(String value) {
        return outputs.contains(value);
    }

    /** The readers of {@code value} in graph order. */
    List<Node> users(String value) {
        Map<String, Integer> r = readers.get(value);
        if (r == null || r.isEmpty()) {
            return List.of();
        }
        if (r.size() == 1) {
            return List.of(byName.get(r.keySet().iterator().next()));
        }
        List<Node> l = new ArrayList<>(r.size());
        r.keySet().forEach(u -> l.add(byName.get(u)));
        l.sort((a, b) -> Long.compare(keyOf.get(a.name()), keyOf.get(b.name())));
        return l;
    }

    int distinctUsers(String value) {
        Map<String, Integer> r = readers.get(value);
        return r == null ? 0 : r.size();
    }

    /** How many inputs of {@code reader} are {@code value}. */
    int reads(String value, String reader) {
        Map<String, Integer> r = readers.get(value);
        return r == null ? 0 : r.getOrDefault(reader, 0);
    }

    /** The first node above {@code n} with its op, inputs, attributes and type, or {@code null}. */
    Node earlierTwin(Node n) {
        TreeMap<Long, String> same = twins.get(Signature.of(n));
        Long first = same == null ? null : same.firstKey();
        return first == null || first >= keyOf.get(n.name()) ? null : byName.get(same.get(first));
    }

    /** Puts {@code n} where {@code old} (same name) was. */
    void replace(Node old, Node n) {
        long k = keyOf.get(old.name());
        remove(old);
        add(n, k);
    }

    /** Inserts {@code nodes}, in order, just above the node named {@code below}. */
    void insertAbove(String below, List<Node> nodes) {
        if (nodes.isEmpty()) {
            return;
        }
        long k = keyOf.get(below);
        Long prevKey = order.lowerKey(k);
        long prev = prevKey == null ? 0 : prevKey;
        if (k - prev <= nodes.size()) {
            renumber();
            k = keyOf.get(below);
            prevKey = order.lowerKey(k);
            prev = prevKey == null ? 0 : prevKey;
        }
        long step = (k - prev) / (nodes.size() + 1);
        for (int i = 0; i < nodes.size(); i++) {
            add(nodes.get(i), prev + step * (i + 1));
        }
    }

    void replaceOutput(String from, String to) {
        outputs.replaceAll(v -> v.equals(from) ? to : v);
    }

    /** Removes {@code n}; its inputs lose a reader. */
    void remove(Node n) {
        byName.remove(n.name());
        long k = keyOf.remove(n.name());
        order.remove(k);
        for (String in : n.inputs()) {
            LinkedHashMap<String, Integer> r = readers.get(in);
            if (r != null && r.merge(n.name(), -1, Integer::sum) <= 0) {
                r.remove(n.name());
            }
        }
        TreeMap<Long, String> same = twins.get(Signature.of(n));
        same.remove(k);
        if (same.isEmpty()) {
            twins.remove(Signature.of(n));
        }
    }

    /** Whether nothing reads {@code value} and it is neither returned nor a graph input (the signature). */
    boolean isDead(String value) {
        Node n = byName.get(value);
        return n != null && n.op() != Op.INPUT && distinctUsers(value) == 0 && !isOutput(value);
    }

    private void add(Node n, long key) {
        if (byName.putIfAbsent(n.name(), n) != null) {
            throw new IllegalStateException("value %" + n.name() + " is defined twice");
        }
        keyOf.put(n.name(), key);
        order.put(key, n);
        for (String in : n.inputs()) {
            readers.computeIfAbsent(in, v -> new LinkedHashMap<>()).merge(n.name(), 1, Integer::sum);
        }
        twins.computeIfAbsent(Signature.of(n), s -> new TreeMap<>()).put(key, n.name());
    }

    /** How many times the keys were renumbered; a caller holding keys maps them with {@link #moved}. */
    int renumbers() {
        return renumbers;
    }

    /** Old key -> new key, for the last renumbering. */
    Map<Long, Long> moved() {
        return moved;
    }

    /** Spreads the keys out again when an insertion finds no room (after ~40 nested insertions at one place). */
    private void renumber() {
        List<Node> all = List.copyOf(order.values());
        Map<Long, Long> map = new HashMap<>();
        for (Node n : all) {
            map.put(keyOf.get(n.name()), null);
            remove(n);
        }
        long k = 0;
        List<Long> oldKeys = new ArrayList<>(new java.util.TreeSet<>(map.keySet()));
        for (int i = 0; i < all.size(); i++) {
            add(all.get(i), k += GAP);
            map.put(oldKeys.get(i), k);
        }
        moved = map;
        renumbers++;
    }
}
