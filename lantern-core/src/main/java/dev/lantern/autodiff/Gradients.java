package dev.lantern.autodiff;

import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.TensorType;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reverse-mode differentiation as a graph transform: a forward graph with a scalar loss becomes one
 * graph that computes the loss and the gradient of each value asked for, made of ordinary IR ops,
 * so the same passes fuse, plan and run it on any backend whose kernels cover its ops.
 *
 * <pre>
 *   1. relevant = the values on a path from a differentiated value to the loss
 *   2. seed d loss = 1, then walk the nodes backwards (Backprop): each relevant node's gradient is the
 *      sum of its readers' contributions, and its op's rule (VjpRules) sends each input its share
 *   3. outputs: the loss, then each gradient (zeros for a value the loss does not depend on)
 * </pre>
 *
 * The forward nodes stay as they are (the backward reads their values: softmax's result, the
 * norms' inputs); canonicalize drops what nothing reads. Differentiate before fusion: rules exist
 * for the primitive ops and for attention, not for gemm, fused_norm or elementwise. Gradient
 * accumulation over micro-batches is the caller's loop: run the graph per micro-batch and sum.
 */
public final class Gradients {
    private Gradients() {}

    /**
     * The graph computing {@code loss} (a floating value of one element) and its gradient with respect
     * to each of {@code wrt} (SSA names of floating values: params, inputs or intermediates).
     */
    public static BackwardGraph of(Graph forward, String loss, List<String> wrt) {
        return of(forward, loss, wrt, Options.DEFAULT);
    }

    /**
     * How rules choose between equivalent backward forms. {@code flashAttention}: attention's gradient
     * as attention_lse / attention_grad_q / attention_grad_kv where they apply (the default), or
     * always through its primitive form (matmul, softmax, matmul: keeps the (s, t) scores).
     */
    public record Options(boolean flashAttention) {
        public static final Options DEFAULT = new Options(true);
        public static final Options PRIMITIVE_ATTENTION = new Options(false);
    }

    /** As {@link #of(Graph, String, List)}, with the rules' choices in {@code options}. */
    public static BackwardGraph of(Graph forward, String loss, List<String> wrt, Options options) {
        Node lossNode = forward.node(loss);
        if (lossNode == null) {
            throw new GradientException("the loss %" + loss + " is not a value of graph " + forward.name());
        }
        TensorType lt = lossNode.type();
        if (lt.shape().numel() != 1 || !lt.dtype().isFloating()) {
            throw new GradientException("the loss must be one floating element, found %" + loss + " : " + lt);
        }
        for (String w : wrt) {
            Node n = forward.node(w);
            if (n == null) {
                throw new GradientException("%" + w + " is not a value of graph " + forward.name());
            }
            if (!n.type().dtype().isFloating()) {
                throw new GradientException("%" + w + " : " + n.type() + " is not floating and has no gradient");
            }
        }
        if (new HashSet<>(wrt).size() != wrt.size()) {
            throw new GradientException("a value is asked for twice in " + wrt);
        }
        GradientBuilder b = new GradientBuilder(forward, options.flashAttention());
        Backprop bp = new Backprop(b, relevant(forward, loss, wrt));
        bp.seed(loss, b.constant(1.0, lt));
        bp.run(forward.nodes());

        List<String> outputs = new ArrayList<>(List.of(loss));
        Map<String, String> grads = new LinkedHashMap<>();
        for (String w : wrt) {
            String g = bp.gradient(w);
            if (g == null) {
                g = b.constant(0.0, forward.type(w)); // the loss does not depend on it
            }
            grads.put(w, g);
            outputs.add(g);
        }
        List<Node> nodes = new ArrayList<>(forward.nodes());
        nodes.addAll(b.nodes());
        return new BackwardGraph(new Graph(forward.name() + "_grad", nodes, outputs), loss, grads);
    }

    /** {@link #of} with respect to every parameter of {@code forward}, in graph order. */
    public static BackwardGraph ofParams(Graph forward, String loss) {
        return of(forward, loss, forward.params().stream().map(Node::name).toList());
    }

    /** Whether {@code op} has a gradient rule (sources have none and need none). */
    public static boolean hasRule(Op op) {
        return VjpRules.has(op);
    }

    /** Values that depend on some of {@code wrt} and that {@code loss} depends on. */
    private static Set<String> relevant(Graph g, String loss, List<String> wrt) {
        Set<String> down = new HashSet<>(wrt);
        for (Node n : g.nodes()) {
            for (String in : n.inputs()) {
                if (down.contains(in)) {
                    down.add(n.name());
                    break;
                }
            }
        }
        Set<String> up = new HashSet<>();
        up.add(loss);
        for (Node n : g.nodes().reversed()) {
            if (up.contains(n.name())) {
                up.addAll(n.inputs());
            }
        }
        up.retainAll(down);
        return up;
    }
}
