package dev.lantern.autodiff;

import dev.lantern.ir.LanternException;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;

/**
 * A graph that {@link Gradients} cannot differentiate: an op with no gradient rule on the path from
 * a differentiated value to the loss, a loss that is not one floating element, an unknown value.
 * The message names the node in text syntax; {@link #op()} names the op, when one is to blame.
 */
public final class GradientException extends LanternException {
    private final Op op;

    /** A problem with the graph as a whole (the loss, the values asked for). */
    public GradientException(String message) {
        super("gradients: " + message);
        this.op = null;
    }

    /** A problem at {@code node}, whose op is to blame. */
    public GradientException(Node node, String problem) {
        super("gradients: " + node + ": " + problem);
        this.op = node.op();
    }

    /** The op with no rule (or that broke one), or {@code null} for graph-level problems. */
    public Op op() {
        return op;
    }
}
