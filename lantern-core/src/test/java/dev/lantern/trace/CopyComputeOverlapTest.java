package dev.lantern.trace;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.lantern.trace.CopyComputeOverlap.Interval;
import dev.lantern.trace.CopyComputeOverlap.Result;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The overlap arithmetic on hand-made intervals, and on seeded random ones against a count on a fine grid. */
class CopyComputeOverlapTest {
    private static Interval iv(double s, double e) {
        return new Interval(s, e);
    }

    @Test
    void disjointCopiesAndComputeDoNotOverlap() {
        // serialized on one stream: copy, kernel, copy, kernel; touching ends share no time
        Result r = CopyComputeOverlap.of(List.of(iv(1, 4), iv(6, 9)), List.of(iv(0, 1), iv(4, 6)));
        assertEquals(0, r.overlap(), 0);
        assertEquals(3, r.copyBusy(), 1e-12);
        assertEquals(6, r.computeBusy(), 1e-12);
        assertEquals(0.0, r.pct());
    }

    @Test
    void aCopyNestedInAKernelIsFullyHidden() {
        Result r = CopyComputeOverlap.of(List.of(iv(0, 10)), List.of(iv(2, 3), iv(5, 7.5)));
        assertEquals(3.5, r.overlap(), 1e-12);
        assertEquals(100.0, r.pct(), 1e-12);
    }

    @Test
    void aKernelNestedInACopy() {
        Result r = CopyComputeOverlap.of(List.of(iv(2, 3)), List.of(iv(0, 10)));
        assertEquals(1, r.overlap(), 1e-12);
        assertEquals(10.0, r.pct(), 1e-12);
    }

    @Test
    void partialOverlapsOnBothSides() {
        // copy [0,4) against kernel [3,8): 1; copy [7,12) against the same kernel: 1, and against [11,20): 1
        Result r = CopyComputeOverlap.of(List.of(iv(3, 8), iv(11, 20)), List.of(iv(0, 4), iv(7, 12)));
        assertEquals(3, r.overlap(), 1e-12);
        assertEquals(9, r.copyBusy(), 1e-12);
        assertEquals(100.0 * 3 / 9, r.pct(), 1e-12);
    }

    @Test
    void severalStreamsCountConcurrentWorkOnce() {
        // two copy streams whose copies overlap each other, two compute streams whose kernels do too
        List<Interval> copies = List.of(iv(0, 6), iv(4, 10), /* second copy stream */ iv(5, 8), iv(20, 22));
        List<Interval> computes = List.of(iv(2, 7), /* second compute stream */ iv(6, 9), iv(21, 30));
        Result r = CopyComputeOverlap.of(computes, copies);
        assertEquals(10 + 2, r.copyBusy(), 1e-12, "[0,10) and [20,22)");
        assertEquals(7 + 9, r.computeBusy(), 1e-12, "[2,9) and [21,30)");
        assertEquals(7 + 1, r.overlap(), 1e-12, "[2,9) and [21,22)");
        assertEquals(100.0 * 8 / 12, r.pct(), 1e-12);
        assertEquals(4, r.copies());
        assertEquals(3, r.computes());
    }

    @Test
    void noCopyIsNoFigureAndEmptyCopiesAreZero() {
        assertNull(CopyComputeOverlap.of(List.of(iv(0, 1)), List.of()).pct());
        assertEquals(0.0, CopyComputeOverlap.of(List.of(iv(0, 1)), List.of(iv(0.5, 0.5))).pct());
        assertEquals(0.0, CopyComputeOverlap.of(List.of(), List.of(iv(0, 1))).pct());
    }

    @Test
    void anIntervalThatEndsBeforeItStartsIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> iv(2, 1));
        assertThrows(IllegalArgumentException.class, () -> iv(Double.NaN, 1));
    }

    @Test
    void seededRandomIntervalsAgainstAGridCount() {
        SplittableRandom rnd = new SplittableRandom(18);
        for (int trial = 0; trial < 200; trial++) {
            int grid = 400;
            boolean[] copy = new boolean[grid];
            boolean[] kern = new boolean[grid];
            List<Interval> cs = random(rnd, grid, copy);
            List<Interval> ks = random(rnd, grid, kern);
            int both = 0;
            int copyCells = 0;
            int kernCells = 0;
            for (int t = 0; t < grid; t++) {
                both += copy[t] && kern[t] ? 1 : 0;
                copyCells += copy[t] ? 1 : 0;
                kernCells += kern[t] ? 1 : 0;
            }
            Result r = CopyComputeOverlap.of(ks, cs);
            assertEquals(both, r.overlap(), 1e-9, "trial " + trial);
            assertEquals(copyCells, r.copyBusy(), 1e-9);
            assertEquals(kernCells, r.computeBusy(), 1e-9);
        }
    }

    /** Up to 6 intervals on whole cells of [0, grid), marked in {@code cover}. */
    private static List<Interval> random(SplittableRandom rnd, int grid, boolean[] cover) {
        List<Interval> out = new ArrayList<>();
        int n = rnd.nextInt(7);
        for (int i = 0; i < n; i++) {
            int s = rnd.nextInt(grid);
            int e = Math.min(grid, s + rnd.nextInt(120));
            out.add(iv(s, e));
            for (int t = s; t < e; t++) {
                cover[t] = true;
            }
        }
        return out;
    }
}
