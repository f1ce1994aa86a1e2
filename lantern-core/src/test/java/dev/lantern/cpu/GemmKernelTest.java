package dev.lantern.cpu;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.SplittableRandom;

import static dev.lantern.cpu.GemmKernel.MR;
import static dev.lantern.cpu.GemmKernel.NR;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every tile of the micro-kernel (the packed 8-row tile for 32 vector registers, the packed 4-row one
 * for AVX2's 16, and the scalar tile of MR rows read in place that runs with vectors off), each on
 * whatever machine runs the tests, against a float64 reference on seeded random panels: odd kc, A rows
 * at a padded stride (or packed, at an offset), C at an offset inside a wider tile, overwritten (C
 * poisoned first) or accumulated.
 */
class GemmKernelTest {

    @ParameterizedTest(name = "kernel={0} kc={1} accumulate={2} seed={3}")
    @CsvSource({"scalar, 1, false, 1", "scalar, 37, true, 2", "scalar, 256, false, 3", "scalar, 255, true, 4",
            "packed4, 1, true, 9", "packed4, 67, false, 10", "packed4, 256, true, 11", "packed4, 193, false, 12",
            "packed8, 1, false, 13", "packed8, 97, true, 14", "packed8, 256, false, 15", "packed8, 211, true, 16",
            "packed8, 41, false, 6", "packed8, 129, true, 8",
            "touch8, 1, false, 17", "touch8, 97, true, 18", "touch8, 256, false, 19", "touch8, 211, true, 20"})
    void matchesTheFloat64Reference(String kernel, int kc, boolean accumulate, long seed) {
        int rows = switch (kernel) {
            case "packed4" -> 4;
            case "packed8", "touch8" -> 8;
            default -> MR; // the scalar kernel's tile, rows read in place
        };
        SplittableRandom r = new SplittableRandom(seed);
        int lda = kc + 7;
        int ao = 3;
        int ldc = 3 * NR;
        int co = NR + 1;
        float[] a = new float[ao + rows * lda];
        for (int i = 0; i < a.length; i++) {
            a[i] = (float) r.nextGaussian();
        }
        long bo = 5;
        MemorySegment bp = Arena.ofAuto().allocate((bo + (long) kc * NR) * 4, 64);
        float[] b = new float[kc * NR];
        for (int i = 0; i < b.length; i++) {
            b[i] = (float) r.nextGaussian();
            bp.setAtIndex(ValueLayout.JAVA_FLOAT, bo + i, b[i]);
        }
        float[] c = new float[co + rows * ldc];
        if (accumulate) {
            for (int i = 0; i < c.length; i++) {
                c[i] = (float) r.nextGaussian();
            }
        } else {
            Arrays.fill(c, Float.NaN);
        }
        float[] before = c.clone();
        if (!kernel.equals("scalar")) {
            // the same A as a packed panel of `rows` rows: A[r, p] at ao + rows·p + r
            float[] panel = new float[ao + rows * kc];
            for (int i = 0; i < rows; i++) {
                for (int p = 0; p < kc; p++) {
                    panel[ao + rows * p + i] = a[ao + i * lda + p];
                }
            }
            if (rows == 4) {
                GemmKernel.vector4Packed(panel, ao, bp, bo * 4, kc, c, co, ldc, accumulate);
            } else if (kernel.equals("touch8")) {
                // touching B's own panel from its start: kc·8 bytes, inside it
                GemmKernel.vector8PackedTouch(panel, ao, bp, bo * 4, kc, c, co, ldc, accumulate, bo * 4);
            } else {
                GemmKernel.vector8Packed(panel, ao, bp, bo * 4, kc, c, co, ldc, accumulate);
            }
        } else {
            GemmKernel.scalar(a, ao, lda, bp, bo, kc, c, co, ldc, accumulate);
        }
        double err = 0;
        double norm = 0;
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j < NR; j++) {
                double want = accumulate ? before[co + i * ldc + j] : 0;
                for (int p = 0; p < kc; p++) {
                    want += (double) a[ao + i * lda + p] * b[p * NR + j];
                }
                double got = c[co + i * ldc + j];
                err += (got - want) * (got - want);
                norm += want * want;
            }
        }
        double rel = Math.sqrt(err / norm);
        assertTrue(norm > 0 && rel <= 1e-6, "rows=" + rows + " kc=" + kc + " seed=" + seed + ": relative error " + rel);
        for (int i = 0; i < c.length; i++) {
            int row = (i - co) / ldc;
            int col = (i - co) % ldc;
            boolean inTile = i >= co && row < rows && col < NR;
            if (!inTile) {
                assertTrue(Float.compare(c[i], before[i]) == 0, "rows=" + rows + ": element " + i + " outside the tile was written");
            }
        }
    }

    /**
     * The touching 8-row kernel computes exactly what the plain one does (GemmTile picks between them
     * by position in the tile, so a row's bits must not depend on it), and its result carries the
     * touched ints or-ed together: the loads really happen.
     */
    @Test
    void theTouchingKernelIsBitIdenticalAndReadsWhatItTouches() {
        SplittableRandom r = new SplittableRandom(23);
        int kc = 173;
        float[] panel = new float[8 * kc];
        for (int i = 0; i < panel.length; i++) {
            panel[i] = (float) r.nextGaussian();
        }
        MemorySegment bp = Arena.ofAuto().allocate(2L * kc * NR * 4, 64);
        for (long i = 0; i < (long) kc * NR; i++) {
            bp.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) r.nextGaussian());
        }
        long next = (long) kc * NR * 4; // the "next panel": marked ints 8 bytes apart
        int want = 0;
        for (int p = 0; p < kc; p++) {
            int mark = 1 << (p % 31);
            bp.set(ValueLayout.JAVA_INT_UNALIGNED, next + 8L * p, mark);
            want |= mark;
        }
        for (boolean accumulate : new boolean[] {false, true}) {
            float[] plain = new float[8 * 3 * NR];
            float[] touched = new float[8 * 3 * NR];
            for (int i = 0; i < plain.length; i++) {
                plain[i] = touched[i] = (float) r.nextGaussian();
            }
            GemmKernel.vector8Packed(panel, 0, bp, 0, kc, plain, NR, 3 * NR, accumulate);
            int got = GemmKernel.vector8PackedTouch(panel, 0, bp, 0, kc, touched, NR, 3 * NR, accumulate, next);
            assertArrayEquals(plain, touched, "accumulate=" + accumulate);
            assertEquals(want, got, "the or of the touched ints");
        }
    }
}
