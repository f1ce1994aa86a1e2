package dev.lantern;

/**
 * How a session runs its forward.
 * <ul>
 * <li>{@link #EAGER}: one kernel per primitive op, each output allocated as it is made and freed
 *     after its last reader (PyTorch eager's behaviour): the baseline;
 * <li>{@link #COMPILED}: the fused kernels out of one planned arena;
 * <li>{@link #GRAPH}: compiled, and on CUDA captured once into a CUDA graph and replayed. Where
 *     a graph cannot be used (the CPU has none; a capture can fail) the forward runs compiled and
 *     the session counts the fallback with its reason in {@link SessionStats}: never silently.
 * </ul>
 */
public enum RunMode {
    EAGER, COMPILED, GRAPH;

    /** {@code eager}, {@code compiled} or {@code graph}; anything else is a typed error. */
    public static RunMode parse(String text) {
        return switch (text.strip().toLowerCase(java.util.Locale.ROOT)) {
            case "eager" -> EAGER;
            case "compiled" -> COMPILED;
            case "graph" -> GRAPH;
            default -> throw new dev.lantern.ir.LanternException("unknown mode '" + text + "' (expected eager, compiled or graph)");
        };
    }

    /** Whether this mode runs the fused kernels. */
    public boolean fused() {
        return this != EAGER;
    }
}
