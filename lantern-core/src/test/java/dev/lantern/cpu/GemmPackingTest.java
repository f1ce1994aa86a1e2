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

    /**
     * PanelTranspose (eight f32 rows straight from a native segment, 16 columns a step by permutes)
     * gives the panel's definition, dst[at + 8p + r] = row r's column p, for widths around the step
     * (1, 15, 16, 17, 33, 256, 1029), rows at a padded byte stride and an offset, nothing written
     * outside the panel.
     */
    @Test
    void eightRowsTransposeStraightFromTheTensorIntoAPanel() {
        SplittableRandom r = new SplittableRandom(31);
        for (int cols : new int[] {1, 15, 16, 17, 33, 256, 1029}) {
            int ld = cols + 3;
            long off = 5;
            java.lang.foreign.MemorySegment seg = java.lang.foreign.Arena.ofAuto().allocate((off + 8L * ld) * 4, 64);
            for (long i = 0; i < off + 8L * ld; i++) {
                seg.setAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT, i, (float) r.nextGaussian());
            }
            int at = 7;
            float[] dst = new float[at + 8 * cols + 9];
            java.util.Arrays.fill(dst, Float.NaN);
            PanelTranspose.fromRows(seg, 4 * off, 4L * ld, cols, dst, at);
            for (int p = 0; p < cols; p++) {
                for (int row = 0; row < 8; row++) {
                    float want = seg.getAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT, off + (long) row * ld + p);
                    assertEquals(want, dst[at + 8 * p + row], "cols=" + cols + " p=" + p + " r=" + row);
                }
            }
            for (int i = 0; i < at; i++) {
                assertEquals(Float.NaN, dst[i], "cols=" + cols + ": written before the panel at " + i);
            }
            for (int i = at + 8 * cols; i < dst.length; i++) {
                assertEquals(Float.NaN, dst[i], "cols=" + cols + ": written past the panel at " + i);
            }
        }
    }

    @Test
    void eightRowsOfAnArrayTransposeIntoAPanelAsTheGatherDid() {
        // the attention kernel's q, score and key rows: PanelTranspose on an array where vectors are 512 bits,
        // GemmPacking.interleave's gathers or scalar loop elsewhere; either way dst[at + MR·p + r] = src[off + r·ld + p]
        SplittableRandom r = new SplittableRandom(37);
        for (int cols : new int[] {1, 15, 16, 17, 33, 64, 130}) {
            int ld = cols + 5;
            int off = 3;
            float[] src = new float[off + GemmKernel.MR * ld];
            for (int i = 0; i < src.length; i++) {
                src[i] = (float) r.nextGaussian();
            }
            int at = 7;
            float[] dst = new float[at + GemmKernel.MR * cols + 9];
            java.util.Arrays.fill(dst, Float.NaN);
            GemmPacking.interleave(src, off, ld, cols, dst, at);
            for (int p = 0; p < cols; p++) {
                for (int row = 0; row < GemmKernel.MR; row++) {
                    assertEquals(src[off + row * ld + p], dst[at + GemmKernel.MR * p + row], "cols=" + cols + " p=" + p + " r=" + row);
                }
            }
            for (int i = 0; i < at; i++) {
                assertEquals(Float.NaN, dst[i], "cols=" + cols + ": written before the panel at " + i);
            }
            for (int i = at + GemmKernel.MR * cols; i < dst.length; i++) {
                assertEquals(Float.NaN, dst[i], "cols=" + cols + ": written past the panel at " + i);
            }
        }
    }
}
