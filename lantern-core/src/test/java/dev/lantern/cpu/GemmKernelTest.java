package dev.lantern.cpu;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.SplittableRandom;

import static dev.lantern.cpu.GemmKernel.NR;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every register tile of the micro-kernel (8 rows for 32 vector registers; 4 for AVX2's 16, on rows
 * read in place and on a packed panel of 4 or 8 rows), each on whatever machine runs the tests, against a
 * float64 reference on seeded random panels: odd kc, A rows at a padded stride (or packed, at an
 * offset), C at an offset inside a wider tile, overwritten (C poisoned first) or accumulated.
 */
class GemmKernelTest {

    @ParameterizedTest(name = "rows={0} packed={1} kc={2} accumulate={3} seed={4}")
    @CsvSource({"4, false, 1, false, 1", "4, false, 37, true, 2", "4, false, 256, false, 3", "4, false, 255, true, 4",
            "8, false, 1, true, 5", "8, false, 41, false, 6", "8, false, 256, true, 7", "8, false, 129, false, 8",
            "4, true, 1, true, 9", "4, true, 67, false, 10", "4, true, 256, true, 11", "4, true, 193, false, 12",
            "8, true, 1, false, 13", "8, true, 97, true, 14", "8, true, 256, false, 15", "8, true, 211, true, 16"})
    void matchesTheFloat64Reference(int rows, boolean packed, int kc, boolean accumulate, long seed) {
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
        if (packed && CpuConfig.VECTOR) {
            // the same A as a packed panel of `rows` rows: A[r, p] at ao + rows·p + r
            float[] panel = new float[ao + rows * kc];
            for (int i = 0; i < rows; i++) {
                for (int p = 0; p < kc; p++) {
                    panel[ao + rows * p + i] = a[ao + i * lda + p];
                }
            }
            if (rows == 4) {
                GemmKernel.vector4Packed(panel, ao, bp, bo * 4, kc, c, co, ldc, accumulate);
            } else {
                GemmKernel.vector8Packed(panel, ao, bp, bo * 4, kc, c, co, ldc, accumulate);
            }
        } else {
            GemmKernel.run(rows, a, ao, lda, bp, bo, kc, c, co, ldc, accumulate);
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
}
