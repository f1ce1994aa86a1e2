package dev.lantern.plan;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Where every intermediate lives in one arena. {@code arenaBytes} is the planned peak;
 * {@code lowerBound} the largest total of bytes live at any one kernel (no placement can do
 * better); {@code naiveBytes} what one buffer per intermediate would take. {@code inPlace} maps
 * each value an elementwise kernel writes over one of its inputs to that input: the two share
 * their bytes, the input's lifetime ending at the kernel where the output's begins.
 */
public record MemoryPlan(List<Placement> placements, long arenaBytes, long lowerBound, long naiveBytes, int steps,
                         Map<String, String> inPlace) {
    public MemoryPlan {
        placements = List.copyOf(placements);
        inPlace = Map.copyOf(inPlace);
    }

    /** Whether {@code a} and {@code b} may share bytes while both live: one is written in place over the other. */
    public boolean handover(Buffer a, Buffer b) {
        return (b.value().equals(inPlace.get(a.value())) && a.first() == b.last())
                || (a.value().equals(inPlace.get(b.value())) && b.first() == a.last());
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
            String over = inPlace.get(p.buffer().value());
            b.append(String.format("buffer %%%-20s offset %10d size %10d live [%d, %d]%s%n",
                    p.buffer().value(), p.offset(), p.buffer().bytes(), p.buffer().first(), p.buffer().last(),
                    over == null ? "" : "  in place over %" + over));
        }
        return b.toString();
    }
}
