package dev.lantern.plan;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Where every intermediate lives in one arena. {@code arenaBytes} is the planned peak;
 * {@code lowerBound} the largest total of bytes live at any one kernel (no placement can do
 * better); {@code naiveBytes} what one buffer per intermediate would take.
 */
public record MemoryPlan(List<Placement> placements, long arenaBytes, long lowerBound, long naiveBytes, int steps) {
    public MemoryPlan {
        placements = List.copyOf(placements);
    }

    /** A buffer at a byte offset of the arena. */
    public record Placement(Buffer buffer, long offset) {
        public long end() {
            return offset + buffer.bytes();
        }
    }

    public Map<String, Placement> byValue() {
        return placements.stream().collect(Collectors.toMap(p -> p.buffer().value(), p -> p));
    }

    /** The byte offset of {@code value}'s buffer; throws when the value has none. */
    public long offset(String value) {
        for (Placement p : placements) {
            if (p.buffer().value().equals(value)) {
                return p.offset();
            }
        }
        throw new IllegalArgumentException("no buffer for %" + value);
    }

    public String dump() {
        StringBuilder b = new StringBuilder();
        b.append(String.format("# memory plan: %d buffers over %d kernels; planned peak %d B, lower bound %d B (%.3fx), naive %d B%n",
                placements.size(), steps, arenaBytes, lowerBound, lowerBound == 0 ? 1.0 : (double) arenaBytes / lowerBound, naiveBytes));
        for (Placement p : placements) {
            b.append(String.format("buffer %%%-20s offset %10d size %10d live [%d, %d]%n",
                    p.buffer().value(), p.offset(), p.buffer().bytes(), p.buffer().first(), p.buffer().last()));
        }
        return b.toString();
    }
}
