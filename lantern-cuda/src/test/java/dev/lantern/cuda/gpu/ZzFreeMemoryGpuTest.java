package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.CudaDevice;
import java.io.IOException;
import java.nio.file.Files;
import org.junit.jupiter.api.ClassOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Runs after every other class but {@link ZzzContextLossGpuTest} (junit-platform.properties
 * orders classes by {@link Order}; that one, which resets the context, has the largest): after
 * the whole tier, the driver-reported free memory is back to what it was when the device was
 * opened, within 2 MiB. Catches leaked allocations, modules, graphs.
 */
@Tag("gpu")
@Order(Integer.MAX_VALUE - 1)
class ZzFreeMemoryGpuTest {
    static final long SLACK = 2L << 20;

    @Test
    void freeMemoryIsBackToItsStart() throws IOException {
        CudaDevice dev = Gpu.device();
        long start = Gpu.freeAtOpen();
        Gpu.releaseShared();
        dev.synchronize();
        long end = dev.freeMemory();
        long delta = start - end;
        long raw = Gpu.freeAtContext() - end;
        String json = String.format("{\"free_at_context\": %d, \"free_after_warmup\": %d, \"free_at_end\": %d, "
                + "\"delta_bytes\": %d, \"delta_from_context_bytes\": %d, \"slack_bytes\": %d, "
                + "\"orderer\": \"%s\"}%n", Gpu.freeAtContext(), start, end, delta, raw, SLACK,
                ClassOrderer.OrderAnnotation.class.getSimpleName());
        Files.writeString(Gpu.outDir().resolve("free-memory.json"), json);
        System.out.printf("[gpu] free memory: after warm-up %d, at end %d, delta %d bytes (%.3f MiB); "
                + "from context creation %.3f MiB%n", start, end, delta, delta / (double) (1 << 20),
                raw / (double) (1 << 20));
        assertTrue(Math.abs(delta) <= SLACK, "free memory moved by " + delta + " bytes over the tier");
    }
}
