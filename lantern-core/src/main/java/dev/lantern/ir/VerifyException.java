package dev.lantern.ir;

/** A graph broke a shape, dtype, layout or structure rule. The message names the node in text syntax. */
public final class VerifyException extends LanternException {
    private final String node;

    public VerifyException(String where, Node node, String problem) {
        super(where + ": " + (node == null ? "" : node + ": ") + problem);
        this.node = node == null ? null : node.toString();
    }

    /** The offending node in text syntax, or {@code null} for graph-level problems. */
    public String node() {
        return node;
    }
}
