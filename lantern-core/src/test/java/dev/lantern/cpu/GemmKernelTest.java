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
 * Both register tiles of the micro-kernel (8 rows for 32 vector registers, 4 for AVX2's 16), each on
 * whatever machine runs the tests, against a float64 reference on seeded random panels: odd kc, A rows
 * at a padded stride, C at an offset inside a wider tile, overwritten (C poisoned first) or accumulated.
 */
class GemmKernelTest {

    @ParameterizedTest(name = "rows={0} kc={1} accumulate={2} seed={3}")
    @CsvSource({"4, 1, false, 1", "4, 37, true, 2", "4, 256, false, 3", "4, 255, true, 4",
            "8, 1, true, 5", "8, 41, false, 6", "8, 256, true, 7", "8, 129, false, 8"})
    void matchesTheFloat64Reference(int rows, int kc, boolean accumulate, long seed) {
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
        GemmKernel.run(rows, a, ao, lda, bp, bo, kc, c, co, ldc, accumulate);
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
