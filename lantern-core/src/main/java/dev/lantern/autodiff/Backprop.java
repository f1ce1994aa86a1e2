package dev.lantern.autodiff;

import dev.lantern.ir.Node;
import dev.lantern.ir.TensorType;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The reverse walk: nodes in reverse order, each node's gradient the sum of what its readers sent
 * it (in the order they sent it, so the graph is the same on every run), its rule sending each
 * input its share. Only the nodes in {@code relevant} (on a path from a differentiated value to
 * the output) are visited, so an op without a rule elsewhere in the graph is no error.
 */
final class Backprop {
    private final GradientBuilder b;
    private final Set<String> relevant;
    private final Map<String, List<String>> sent = new HashMap<>();
    private final Map<String, String> total = new LinkedHashMap<>();

    Backprop(GradientBuilder b, Set<String> relevant) {
        this.b = b;
        this.relevant = relevant;
    }

    /** Seeds {@code value}'s gradient with {@code grad}. */
    void seed(String value, String grad) {
        sent.computeIfAbsent(value, k -> new ArrayList<>()).add(grad);
    }

    /** Walks {@code nodes} (a forward order) backwards, applying each relevant node's rule. */
    void run(List<Node> nodes) {
        for (Node n : nodes.reversed()) {
            if (n.op().isSource() || !relevant.contains(n.name()) || !sent.containsKey(n.name())) {
                continue;
            }
            boolean[] need = new boolean[n.inputs().size()];
            boolean any = false;
            for (int i = 0; i < need.length; i++) {
                need[i] = relevant.contains(n.input(i)) && b.type(n.input(i)).dtype().isFloating();
                any |= need[i];
            }
            if (!any) {
                continue;
            }
            VjpRule rule = VjpRules.rule(n);
            String dy = gradient(n.name());
            String[] dx = rule.vjp(n, dy, need, b);
            for (int i = 0; i < need.length; i++) {
                if (need[i] && dx[i] != null) {
                    check(n, i, dx[i]);
                    seed(n.input(i), dx[i]);
                }
            }
        }
    }

    /** The summed gradient of {@code value}, or {@code null} when nothing reached it. */
    String gradient(String value) {
        String t = total.get(value);
        if (t != null) {
            return t;
        }
        List<String> parts = sent.get(value);
        if (parts == null) {
            return null;
        }
        String acc = parts.getFirst();
        for (int i = 1; i < parts.size(); i++) {
            acc = b.add(acc, parts.get(i));
        }
        total.put(value, acc);
        return acc;
    }

    private void check(Node n, int i, String dx) {
        TensorType want = b.type(n.input(i));
        TensorType got = b.type(dx);
        if (!want.shape().equals(got.shape()) || want.dtype() != got.dtype()) {
            throw new GradientException(n, "the rule gave input " + i + " a gradient of type " + got + ", expected "
                    + want.contiguous() + " (a gradient rule is wrong)");
        }
    }
}
