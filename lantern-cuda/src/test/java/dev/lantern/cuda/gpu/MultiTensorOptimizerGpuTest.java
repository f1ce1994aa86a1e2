package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.lantern.cuda.train.MultiTensorProbe;
import dev.lantern.cuda.train.SgdProbe;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The device optimizer's multi-tensor kernels on seeded random odd sizes: the unscaled sum of
 * squares against float64, three unscaled and clipped AdamW steps bit for bit against the CPU's
 * AdamW, and planted inf/NaN reported for exactly their tensors ({@link MultiTensorProbe}); four
 * unscaled, clipped SGD steps (momentum with weight decay, dampening, Nesterov, plain) bit for bit
 * against the CPU's Sgd on tensors of 1, 7 and 1000003 elements, and resumed from downloaded state
 * after two steps ending bit for bit the same ({@link SgdProbe}).
 */
@Tag("gpu")
class MultiTensorOptimizerGpuTest {
    @Test
    void kernelsMatchTheCpuOnOddSizes() {
        for (long seed : new long[] {16, 17, 1234567}) {
            assertEquals("", MultiTensorProbe.check(Gpu.device(), seed), "seed " + seed);
        }
    }

    @Test
    void sgdKernelMatchesTheCpuOnOddSizesAndResumes() {
        for (long seed : new long[] {18, 1234567}) {
            assertEquals("", SgdProbe.check(Gpu.device(), seed), "seed " + seed);
        }
    }
}
