package dev.lantern.cpu;

import static dev.lantern.cpu.GemmKernel.NR;

/**
 * How {@link Gemm} splits C's columns into tiles: whole B panels (NR columns) per tile, at most
 * {@link Gemm#NC} columns (the tile buffer's width), spread as evenly as the panels allow.
 *
 * <p>With more than one thread the split aims at {@link Gemm#TILES_PER_THREAD} tile(s) per thread
 * and a tile count that the threads divide evenly: halving a 512-column block until there were
 * enough tiles gave GPT-2's 128 × 768 × 2304 projection 9 tiles of 256 columns, 5 on one thread and
 * 4 on the other (1.65× from 1 to 2 threads against 1.85–1.90× for its other GEMMs, 2026-12-03);
 * 6 tiles of 12 panels each balance. At one thread the fewest tiles that fit are taken: narrower
 * tiles only stream A more often (cpu-small 6.6 % and encoder-small 5 % less CPU per forward than
 * with the multi-thread split, 2026-12-02).
 */
final class GemmTiles {
    private GemmTiles() {}

    /**
     * The column boundaries of the tiles of an n-column C, {@code rowTiles} tiles deep (batches ×
     * row blocks), for {@code threads} threads: tile t spans columns [b[t], b[t+1]), each a whole
     * number of panels but the last, which ends at n.
     */
    static int[] columns(int n, long rowTiles, int threads) {
        if (n < 1 || rowTiles < 1 || threads < 1) {
            throw new IllegalArgumentException("column tiles need n, row tiles and threads >= 1, found "
                    + n + ", " + rowTiles + " and " + threads);
        }
        int panels = (n + NR - 1) / NR;
        int perTile = Gemm.NC / NR;
        int tiles = (panels + perTile - 1) / perTile;
        if (threads > 1) {
            // at least two panels a tile (a narrower one re-streams A for too little work)
            int most = Math.max(tiles, panels / 2);
            long wanted = Gemm.TILES_PER_THREAD * threads;
            int want = (int) Math.min(most, Math.max(tiles, (wanted + rowTiles - 1) / rowTiles));
            while (want < most && rowTiles * want % threads != 0) {
                want++;
            }
            tiles = want;
        }
        int[] b = new int[tiles + 1];
        for (int t = 0; t <= tiles; t++) {
            b[t] = Math.min(n, (int) ((long) panels * t / tiles) * NR);
        }
        return b;
    }
}
