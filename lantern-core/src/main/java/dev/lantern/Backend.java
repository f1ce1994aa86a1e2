package dev.lantern;

/**
 * A device kind's engine, found with {@link java.util.ServiceLoader} (a module adds one by
 * listing it in {@code META-INF/services/dev.lantern.Backend}): lantern-core serves {@code cpu},
 * lantern-cuda {@code cuda}. Users never call it; {@link Program#load} does.
 */
public interface Backend {
    /** The device kind it serves: {@code "cpu"} or {@code "cuda"}. */
    String kind();

    /** How many devices of its kind are usable here (0 when none: no GPU, no driver, no library). */
    int deviceCount();

    /** Why none is usable, or {@code null} when at least one is. */
    String unavailableReason();

    /** Loads {@code program} on {@code device} (of this backend's kind) with {@code weights}. */
    Session open(Program program, Device device, Weights weights, RunMode mode);
}
