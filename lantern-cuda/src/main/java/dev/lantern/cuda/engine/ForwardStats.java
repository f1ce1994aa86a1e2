package dev.lantern.cuda.engine;

/**
 * The forwards a caller asked a {@link CudaSession} for ({@link CudaSession#forward},
 * {@link CudaSession#forwardGraph}; every warm-up and timed run of {@link CudaSession#timeMs} on
 * them counts), by how they ran. Forwards the session makes for itself (the autotuner's priming
 * forward, {@link CudaSession#profileInForward}'s warm-ups, {@link CudaSession#runUntil}) are not
 * the caller's and are not counted.
 *
 * @param replays        forwardGraph calls that ran the captured graph (the capturing call included)
 * @param graphEagerRuns forwardGraph calls that the runner ran eagerly (policy OFF, a failed capture)
 * @param plainForwards  forward calls (compiled kernel by kernel, or eager), and an eager session's forwardGraph
 */
public record ForwardStats(long replays, long graphEagerRuns, long plainForwards) {
    public long forwards() {
        return replays + graphEagerRuns + plainForwards;
    }

    /**
     * DESIGN.md's graph_hit_pct, replays ÷ (replays + eager runs), over every forward of the
     * session: a forward that ran without a graph for any reason, forward() included, is an
     * eager run here. (The graph runner's own {@code Stats.graphHitPct} sees only forwardGraph.)
     */
    public double graphHitPct() {
        return forwards() == 0 ? 0.0 : 100.0 * replays / forwards();
    }
}

