package dev.lantern.cli;

import dev.lantern.runtime.alloc.AllocatorStats;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The allocator's memory over a soak for {@code soak --json}'s {@code "timeline"} (what
 * {@code lantern report} charts): seconds since the first sample, reserved and allocated bytes and
 * fragmentation %. A soak samples hundreds of thousands of times, so at most {@link #MAX} points are
 * kept, evenly spaced in samples: when the list fills, every other point goes and the stride doubles.
 */
final class SoakTimeline {
    static final int MAX = 256;

    private record Point(long nanos, long reserved, long allocated, double fragPct) {}

    private final List<Point> points = new ArrayList<>();
    private long start = -1;
    private long seen;
    private long stride = 1;

    synchronized void add(AllocatorStats s) {
        long now = System.nanoTime();
        if (start < 0) {
            start = now;
        }
        if (seen++ % stride != 0) {
            return;
        }
        points.add(new Point(now - start, s.reserved(), s.allocated(), s.allocFragPct()));
        if (points.size() >= 2 * MAX) {
            List<Point> kept = new ArrayList<>(MAX);
            for (int i = 0; i < points.size(); i += 2) {
                kept.add(points.get(i));
            }
            points.clear();
            points.addAll(kept);
            stride *= 2;
        }
    }

    /** The points as a JSON array. */
    synchronized String json() {
        StringBuilder b = new StringBuilder("[");
        for (Point p : points) {
            b.append(b.length() > 1 ? "," : "").append(String.format(Locale.ROOT,
                    "{\"t_s\":%.3f,\"reserved_bytes\":%d,\"allocated_bytes\":%d,\"frag_pct\":%.2f}", p.nanos() / 1e9, p.reserved(),
                    p.allocated(), p.fragPct()));
        }
        return b.append(']').toString();
    }

    /** {@code reportJson} (one object) with the timeline added as its last member. */
    String addTo(String reportJson) {
        String j = reportJson.strip();
        return j.substring(0, j.length() - 1) + ",\"timeline\":" + json() + "}";
    }
}
