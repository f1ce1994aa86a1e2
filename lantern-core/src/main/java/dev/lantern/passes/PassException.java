package dev.lantern.passes;

import dev.lantern.ir.LanternException;
import dev.lantern.ir.Node;

/** A pass met a graph it cannot handle: {@code <pass>: %n = op(...) : type: problem}. */
public final class PassException extends LanternException {
    private final String pass;
    private final String node;

    public PassException(String pass, Node node, String problem) {
        super(pass + ": " + (node == null ? "" : node + ": ") + problem);
        this.pass = pass;
        this.node = node == null ? null : node.toString();
    }

    public String pass() {
        return pass;
    }

    /** The offending node in text syntax, or {@code null} for graph-level problems. */
    public String node() {
        return node;
    }
}
