package dev.lantern.cuda.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** graph_hit_pct over every forward of a session: a plain forward or a runner fallback is a miss. */
class ForwardStatsTest {
    @Test
    void everyForwardWithoutAGraphCountsAgainstTheHitRate() {
        assertEquals(0.0, new ForwardStats(0, 0, 0).graphHitPct(), "no forwards yet");
        assertEquals(100.0, new ForwardStats(30, 0, 0).graphHitPct(), "a session that only replays");
        // the bench's old figure: 210 replays beside 211 plain compiled forwards of the same session read 100 %
        assertEquals(100.0 * 210 / 421, new ForwardStats(210, 0, 211).graphHitPct(), 1e-12);
        assertEquals(50.0, new ForwardStats(5, 5, 0).graphHitPct(), "a failed capture's eager runs are misses");
        assertEquals(0.0, new ForwardStats(0, 0, 7).graphHitPct(), "an eager session");
        assertEquals(421, new ForwardStats(210, 0, 211).forwards());
    }
}
