package dev.lantern.trace;

import java.util.Map;

/**
 * One complete event of a Chrome/Perfetto trace ({@code "ph": "X"}): {@code name} on track
 * {@code tid}, starting {@code startNanos} after the recorder's origin and lasting
 * {@code durNanos}. {@code args} holds small extra figures (a kernel's index, bytes) shown beside
 * the slice; values are strings or numbers.
 */
public record TraceEvent(String name, String category, long tid, long startNanos, long durNanos, Map<String, Object> args) {
    public TraceEvent {
        if (durNanos < 0) {
            throw new IllegalArgumentException("trace event '" + name + "': negative duration " + durNanos + " ns");
        }
        args = args == null ? Map.of() : Map.copyOf(args);
    }

    public long endNanos() {
        return startNanos + durNanos;
    }
}
