package dev.lantern.passes;

import dev.lantern.ir.Graph;

/**
 * One step of the pipeline: a pure function from a graph to a graph. A pass that meets a graph it
 * cannot handle throws {@link PassException} naming itself and the node; it never returns a wrong
 * graph. {@link #dump} lets a pass show what it decided beyond the IR (the kernel list of
 * {@code partition}, the arena of {@code plan-memory}).
 */
public interface Pass {
    /** The name used by {@code --passes} and in errors, such as {@code fuse-attention}. */
    String name();

    /** One line: what the pass does. */
    String summary();

    Graph run(Graph g);

    /** Extra text shown after the IR by {@code lantern opt}; empty for most passes. */
    default String dump(Graph result) {
        return "";
    }
}
