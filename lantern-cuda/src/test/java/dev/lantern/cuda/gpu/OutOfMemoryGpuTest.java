package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaSegmentSource;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.ffi.CudaOutOfMemoryException;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("gpu")
class OutOfMemoryGpuTest {
    static final long PIB = 1L << 50;

    @Test
    void impossibleAllocationIsTypedAndTheDeviceStaysUsable() {
        CudaDevice dev = Gpu.device();
        CudaOutOfMemoryException e = assertThrows(CudaOutOfMemoryException.class, () -> dev.allocate(PIB));
        assertEquals("CUDA_ERROR_OUT_OF_MEMORY", e.errorName());
        assertEquals("cuMemAlloc_v2", e.call());
        assertEquals(PIB, e.requestedBytes());
        System.out.println("[gpu] " + e.getMessage());

        CudaSegmentSource source = new CudaSegmentSource(dev);
        assertEquals(-1, source.reserve(PIB), "the allocator contract: -1 on OOM");
        long seg = source.reserve(1 << 20);
        assertTrue(seg != 0 && seg != -1);
        source.release(seg, 1 << 20);

        // The next kernel still runs correctly: OOM is not a sticky error.
        int n = 100_003;
        float[] x0 = new float[n];
        SplittableRandom r = new SplittableRandom(System.nanoTime());
        for (int i = 0; i < n; i++) {
            x0[i] = (float) r.nextGaussian();
        }
        CudaStream s = dev.newStream(false);
        try (CudaStorage x = dev.allocate(4L * n)) {
            Gpu.upload(s, x0, x);
            Gpu.kernels().kernel("add_one").launch(s, new int[] {Gpu.blocks(n, 256)}, new int[] {256}, 0, x, n);
            float[] out = Gpu.download(s, x, n);
            for (int i = 0; i < n; i++) {
                assertEquals(x0[i] + 1f, out[i], "at " + i);
            }
        } finally {
            s.close();
        }
    }
}
