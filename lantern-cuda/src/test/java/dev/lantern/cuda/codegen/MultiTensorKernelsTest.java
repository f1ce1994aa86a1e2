package dev.lantern.cuda.codegen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The host's mirror of {@code lt_mt_decide}'s sum ({@link MultiTensorKernels#lanes}) and the
 * decision kernel's source; the GPU tier checks the device's bits against it (MultiTensorProbe).
 */
class MultiTensorKernelsTest {
    @Test
    void lanesAddEveryChunkInTheirFixedOrder() {
        double[] ints = new double[1000];
        for (int i = 0; i < ints.length; i++) {
            ints[i] = i + 1;
        }
        assertEquals(500500.0, MultiTensorKernels.lanes(ints)); // exact in double whatever the order
        assertEquals(0.0, MultiTensorKernels.lanes(new double[0]));
        Random r = new Random(11);
        double[] x = new double[12_289]; // the decoder step's chunk count: more chunks than lanes, not a multiple
        double plain = 0;
        for (int i = 0; i < x.length; i++) {
            x[i] = r.nextDouble() * Math.pow(10, r.nextInt(12) - 6);
            plain += x[i];
        }
        double lanes = MultiTensorKernels.lanes(x);
        assertEquals(plain, lanes, 1e-12 * plain);
        // the order is the lanes' own: a lane-by-lane tree, not the sequential sum, whose bits differ here
        double[] lane = new double[MultiTensorKernels.THREADS];
        for (int i = 0; i < x.length; i++) {
            lane[i % lane.length] += x[i];
        }
        for (int k = lane.length / 2; k > 0; k >>= 1) {
            for (int i = 0; i < k; i++) {
                lane[i] += lane[i + k];
            }
        }
        assertEquals(Double.doubleToRawLongBits(lane[0]), Double.doubleToRawLongBits(lanes));
        assertNotEquals(Double.doubleToRawLongBits(plain), Double.doubleToRawLongBits(lanes));
    }

    @Test
    void decideWritesItsControlWordsFromOneThread() {
        String src = MultiTensorKernels.decide().source();
        assertTrue(src.contains("control[0] = __float_as_int(coef);"), src);
        assertTrue(src.contains("control[2] = skipNonFinite && sb[0] ? 1 : 0;"), src);
        assertTrue(MultiTensorKernels.adamw().source().contains("if (control[2]) return;"));
        assertTrue(MultiTensorKernels.sgd().source().contains("if (control[2]) return;"));
    }
}
