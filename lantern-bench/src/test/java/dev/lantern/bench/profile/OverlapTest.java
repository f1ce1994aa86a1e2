package dev.lantern.bench.profile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.lantern.trace.CopyComputeOverlap;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class OverlapTest {
    @Test
    void theTraceFixturesOverlapIsKnown() {
        Overlap.Result r = Overlap.fromTrace("gpu_trace.csv", NsysSummaryTest.fixture("gpu_trace.csv"));
        assertEquals(3, r.kernels());
        assertEquals(3, r.memcpys(), "the memset is neither a copy nor a kernel");
        assertEquals(250, r.memcpyBusyUs(), 1e-6, "two copies at once count once");
        assertEquals(320, r.kernelBusyUs(), 1e-6);
        assertEquals(70, r.overlapUs(), 1e-6);
        assertEquals(28, r.pct(), 1e-6);
    }

    @Test
    void noCopyMeansNoFigure() {
        Overlap.Result r = Overlap.fromTrace("t.csv", "Start (ns),Duration (ns),Name\n0,100,lt_k0\n");
        assertNull(r.pct());
        assertEquals(0.1, r.kernelBusyUs(), 1e-12);
        assertThrows(ProfileFormatException.class, () -> Overlap.fromTrace("t.csv", "Start (ns),Duration (ns),Strm\n0,100,7\n"),
                "no Name column");
        assertThrows(ProfileFormatException.class, () -> Overlap.fromTrace("t.csv", "Start (ns),Duration (ns),Name\n0,-5,lt_k0\n"));
    }

    /** Against a reference that marks every nanosecond of seeded random intervals. */
    @Test
    void matchesANanosecondByNanosecondCount() {
        Random rnd = new Random(18);
        for (int trial = 0; trial < 200; trial++) {
            int span = 2_000;
            boolean[] k = new boolean[span];
            boolean[] c = new boolean[span];
            List<CopyComputeOverlap.Interval> ks = new ArrayList<>();
            List<CopyComputeOverlap.Interval> cs = new ArrayList<>();
            for (int i = 0, n = 1 + rnd.nextInt(12); i < n; i++) {
                int s = rnd.nextInt(span - 1);
                int e = s + 1 + rnd.nextInt(Math.min(400, span - s - 1) + 1);
                e = Math.min(e, span);
                ks.add(new CopyComputeOverlap.Interval(s, e));
                for (int t = s; t < e; t++) {
                    k[t] = true;
                }
            }
            for (int i = 0, n = 1 + rnd.nextInt(8); i < n; i++) {
                int s = rnd.nextInt(span - 1);
                int e = Math.min(span, s + 1 + rnd.nextInt(300));
                cs.add(new CopyComputeOverlap.Interval(s, e));
                for (int t = s; t < e; t++) {
                    c[t] = true;
                }
            }
            int both = 0;
            int copy = 0;
            int kern = 0;
            for (int t = 0; t < span; t++) {
                both += k[t] && c[t] ? 1 : 0;
                copy += c[t] ? 1 : 0;
                kern += k[t] ? 1 : 0;
            }
            Overlap.Result r = Overlap.of(ks, cs);
            assertEquals(both, r.overlapUs(), 1e-9, "trial " + trial);
            assertEquals(copy, r.memcpyBusyUs(), 1e-9, "trial " + trial);
            assertEquals(kern, r.kernelBusyUs(), 1e-9, "trial " + trial);
            assertEquals(100.0 * both / copy, r.pct(), 1e-9, "trial " + trial);
        }
    }
}
