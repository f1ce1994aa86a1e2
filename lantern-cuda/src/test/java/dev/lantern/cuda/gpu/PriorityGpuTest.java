package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaEvent;
import dev.lantern.cuda.driver.CudaModule;
import dev.lantern.cuda.driver.CudaStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A high-priority stream overtakes a busy low-priority one: the low stream gets a spin
 * kernel of many waves (every SM full, blocks queued behind), then the high stream gets a
 * one-block kernel. The block scheduler serves pending high-priority blocks first, so the
 * short kernel finishes after about one wave, long before the low kernel ends.
 */
@Tag("gpu")
class PriorityGpuTest {
    @Test
    void highPriorityKernelFinishesFirst() {
        CudaDevice dev = Gpu.device();
        int[] range = dev.priorityRange();
        assertTrue(range[1] < range[0], "the device offers distinct priorities: " + range[0] + ".." + range[1]);
        CudaModule.CudaKernel spin = Gpu.kernels().kernel("spin");
        int threads = 256;
        int perSm = spin.maxActiveBlocksPerSm(threads, 0);
        int waves = 20;
        int lowBlocks = dev.target().smCount() * perSm * waves;
        long cycles = 100_000; // ~50 us per wave
        CudaStream low = dev.newStream(false);
        CudaStream high = dev.newStream(true);
        try (CudaEvent start = dev.newEvent(true); CudaEvent lowEnd = dev.newEvent(true);
             CudaEvent highEnd = dev.newEvent(true)) {
            low.record(start);
            spin.launch(low, new int[] {lowBlocks}, new int[] {threads}, 0, cycles, 0L);
            low.record(lowEnd);
            spin.launch(high, new int[] {1}, new int[] {32}, 0, cycles, 0L);
            high.record(highEnd);
            lowEnd.synchronize();
            highEnd.synchronize();
            float lowMs = lowEnd.elapsedMillisSince(start);
            float highMs = highEnd.elapsedMillisSince(start);
            System.out.printf("[gpu] priority: low (%d blocks, %d waves) done at %.3f ms, high done at %.3f ms "
                    + "(priorities %d vs %d)%n", lowBlocks, waves, lowMs, highMs, low.priority(), high.priority());
            assertTrue(highMs < lowMs * 0.5, "high finished at " + highMs + " ms, low at " + lowMs + " ms");
        } finally {
            low.close();
            high.close();
        }
    }
}
