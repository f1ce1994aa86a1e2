package dev.lantern.cpu;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static dev.lantern.cpu.GemmKernel.NR;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** GemmTiles' column split: whole panels, at most NC wide, covering [0, n), balanced over the threads where it can be. */
class GemmTilesTest {

    @Test
    void seededRandomWidthsAreCoveredByWholePanelsNoWiderThanTheTileBuffer() {
        SplittableRandom r = new SplittableRandom(15);
        for (int i = 0; i < 2000; i++) {
            int n = 1 + r.nextInt(i < 1000 ? 600 : 60_000);
            long rowTiles = 1 + r.nextInt(12);
            int threads = 1 + r.nextInt(8);
            int[] b = GemmTiles.columns(n, rowTiles, threads);
            String what = "n=" + n + " rowTiles=" + rowTiles + " threads=" + threads;
            assertEquals(0, b[0], what);
            assertEquals(n, b[b.length - 1], what);
            for (int t = 0; t + 1 < b.length; t++) {
                int w = b[t + 1] - b[t];
                assertTrue(w > 0 && w <= Gemm.NC, what + ": tile " + t + " is " + w + " wide");
                assertEquals(0, b[t] % NR, what + ": tile " + t + " starts inside a panel");
            }
            int panels = (n + NR - 1) / NR;
            int tiles = b.length - 1;
            if (threads == 1) {
                assertEquals((panels + Gemm.NC / NR - 1) / (Gemm.NC / NR), tiles, what + ": one thread takes the fewest tiles");
            } else if (tiles < Math.max((panels + Gemm.NC / NR - 1) / (Gemm.NC / NR), panels / 2)) {
                assertEquals(0, rowTiles * tiles % threads, what + ": the threads divide the tiles");
            }
        }
    }

    @Test
    void gpt2QkvProjectionSplitsEvenlyOverTwoThreads() {
        // 128 x 768 x 2304, one row block: halving 512 columns gave 9 tiles with 512-bit vectors, 5 + 4 on two threads
        int[] b = GemmTiles.columns(2304, 1, 2);
        int tiles = b.length - 1;
        assertEquals(0, tiles % 2, "tiles " + tiles);
        int narrow = Integer.MAX_VALUE;
        int wide = 0;
        for (int t = 0; t < tiles; t++) {
            narrow = Math.min(narrow, b[t + 1] - b[t]);
            wide = Math.max(wide, b[t + 1] - b[t]);
        }
        assertTrue(wide - narrow <= NR, "tile widths " + narrow + ".." + wide);
    }

    @Test
    void refusesAnEmptyCOrNoThreads() {
        // Gemm returns before splitting an empty C; asked directly, the split names what it needs
        for (int[] bad : new int[][] {{0, 1, 2}, {-3, 1, 1}, {64, 0, 2}, {64, 1, 0}}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GemmTiles.columns(bad[0], bad[1], bad[2]));
            assertTrue(e.getMessage().contains(">= 1"), e.getMessage());
        }
    }
}
