package dev.lantern;

import java.util.Map;

/**
 * What a session's forwards did: how many ran, how many replayed a CUDA graph, and every
 * forward that was asked to replay a graph but could not, by reason. {@code graphHitPct} is
 * replays ÷ forwards (the Phase 1 plan's graph_hit_pct).
 *
 * @param forwards       every {@link Session#run} that completed
 * @param graphReplays   forwards that replayed a captured CUDA graph
 * @param graphFallbacks forwards of a {@link RunMode#GRAPH} session that ran without a graph, by reason
 */
public record SessionStats(long forwards, long graphReplays, Map<String, Long> graphFallbacks) {
    public SessionStats {
        graphFallbacks = Map.copyOf(graphFallbacks);
    }

    /** Replays ÷ forwards in %, 0 before the first forward. */
    public double graphHitPct() {
        return forwards == 0 ? 0 : 100.0 * graphReplays / forwards;
    }
}
