package dev.lantern.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link GemmPacking#interleave}, the MR-row panel of A (and of the attention kernels' q and
 * probabilities): dst[at + p·MR + r] = src[off + r·ld + p] for seeded random strides, widths and
 * offsets, one after another on one thread, among them a stride that is MR times the one before
 * (the gather's per-thread offsets once served such a pair stale).
 */
class GemmPackingTest {
    @Test
    void panelsHoldEachRowsColumnsInOrderWhateverTheStrideBefore() {
        SplittableRandom r = new SplittableRandom(20261203);
        int mr = GemmKernel.MR;
        int prev = 1;
        for (int t = 0; t < 3000; t++) {
            int ld = t % 3 == 2 ? prev * mr : 1 + r.nextInt(400);
            int cols = 1 + r.nextInt(ld);
            int off = r.nextInt(40);
            int at = r.nextInt(40);
            float[] src = new float[off + mr * ld];
            for (int i = 0; i < src.length; i++) {
                src[i] = (float) r.nextGaussian();
            }
            float[] dst = GemmPacking.interleave(src, off, ld, cols, new float[at + mr * cols], at);
            for (int p = 0; p < cols; p++) {
                for (int row = 0; row < mr; row++) {
                    assertEquals(src[off + row * ld + p], dst[at + p * mr + row], "t " + t + " ld " + ld + " p " + p + " row " + row);
                }
            }
            prev = ld;
        }
    }
}
