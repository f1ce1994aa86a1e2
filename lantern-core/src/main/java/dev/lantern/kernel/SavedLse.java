package dev.lantern.kernel;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The attention_lse nodes that a forward attention kernel writes on the side. A training step's
 * attention gradient ({@code FlashAttentionVjp}) reads the forward's row log-sum-exp:
 * <pre>
 *   %y   = attention(%q, %k, %v [, %m]) {causal=c, scale=s, rope=true, rope_base=b}
 *   %q'  = rope(%q) {base=b}        %k' = rope(%k) {base=b}       (or %q, %k themselves without rope)
 *   %lse = attention_lse(%q', %k' [, %m]) {causal=c, scale=s}   -> written by %y's kernel
 * </pre>
 * The forward's online softmax ends with each row's max and sum, so its kernel writes
 * {@code lse = max + log(sum)} (f32, (b, h, s)) at the cost of one float per row, and the
 * attention_lse node needs no kernel of its own: one pass over q·kᵀ fewer. The graph is not
 * changed (the CPU still computes attention_lse as a node); only a schedule whose {@link Target}
 * {@linkplain Target#savesAttentionLse() says so} uses this. Each forward serves at most one
 * attention_lse, the first that matches in graph order; an attention_lse that no forward matches
 * keeps its kernel.
 */
public final class SavedLse {
    private SavedLse() {}

    /** For each attention node (by name) that writes one: the attention_lse node it serves. */
    public static Map<String, Node> of(Graph g) {
        Map<String, Node> served = new LinkedHashMap<>();
        Set<String> taken = new HashSet<>();
        for (Node lse : g.nodes()) {
            if (lse.op() != Op.ATTENTION_LSE) {
                continue;
            }
            for (Node fwd : g.nodes()) {
                if (fwd == lse) {
                    break; // the forward runs first: only nodes before the lse
                }
                if (fwd.op() == Op.ATTENTION && !taken.contains(fwd.name()) && serves(fwd, lse, g)) {
                    served.put(fwd.name(), lse);
                    taken.add(fwd.name());
                    break;
                }
            }
        }
        return served;
    }

    /** Whether {@code fwd}'s scores are {@code lse}'s: the same q and k (through rope), mask, causal flag and scale. */
    static boolean serves(Node fwd, Node lse, Graph g) {
        Attrs f = fwd.op().withDefaults(fwd.attrs());
        Attrs l = lse.op().withDefaults(lse.attrs());
        if (!fwd.attrs().has("scale") || !lse.attrs().has("scale")
                || Double.compare(f.getDouble("scale", 0), l.getDouble("scale", 0)) != 0
                || f.getBool("causal", false) != l.getBool("causal", false)) {
            return false;
        }
        boolean fwdMask = fwd.inputs().size() > 3;
        boolean lseMask = lse.inputs().size() > 2;
        if (fwdMask != lseMask || fwdMask && !fwd.input(3).equals(lse.input(2))) {
            return false;
        }
        boolean rope = f.getBool("rope", false);
        double base = f.getDouble("rope_base", 10000.0);
        return sameOperand(fwd.input(0), lse.input(0), rope, base, g) && sameOperand(fwd.input(1), lse.input(1), rope, base, g);
    }

    /** Whether {@code seen} is {@code x} (no rope) or {@code rope(x) {base}} at offset 0 (rope). */
    private static boolean sameOperand(String x, String seen, boolean rope, double base, Graph g) {
        if (!rope) {
            return x.equals(seen);
        }
        Node r = g.node(seen);
        if (r == null || r.op() != Op.ROPE || !r.input(0).equals(x) || g.type(x).dtype() != r.type().dtype()
                || !g.type(x).shape().equals(r.type().shape())) {
            return false;
        }
        Attrs a = r.op().withDefaults(r.attrs());
        return Double.compare(a.getDouble("base", 10000.0), base) == 0 && a.getInt("offset", 0) == 0 && !a.getBool("inverse", false);
    }
}
