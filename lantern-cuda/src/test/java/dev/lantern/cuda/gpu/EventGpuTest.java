package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.CudaDevice;
import dev.lantern.cuda.CudaEvent;
import dev.lantern.cuda.CudaStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("gpu")
class EventGpuTest {
    @Test
    void timingAroundASpinIsPositiveAndPlausible() {
        CudaDevice dev = Gpu.device();
        CudaStream s = dev.newStream(false);
        try (CudaEvent a = dev.newEvent(true); CudaEvent b = dev.newEvent(true)) {
            long cycles = 2_000_000; // ~1 ms at ~2 GHz
            s.record(a);
            Gpu.kernels().kernel("spin").launch(s, new int[] {1}, new int[] {32}, 0, cycles, 0L);
            s.record(b);
            b.synchronize();
            assertTrue(b.isComplete());
            float ms = b.elapsedMillisSince(a);
            double expected = cycles / (dev.target().clockKHz() * 1e3) * 1e3;
            System.out.printf("[gpu] spin of %d cycles: %.3f ms (%.3f ms at the nominal clock)%n", cycles, ms, expected);
            assertTrue(ms > 0, "elapsed " + ms);
            assertTrue(ms > expected * 0.3 && ms < expected * 5, "elapsed " + ms + " ms vs ~" + expected);
        } finally {
            s.close();
        }
    }

    @Test
    void eventsWithoutTimingRefuseElapsedAndStillOrderStreams() {
        CudaDevice dev = Gpu.device();
        CudaStream s1 = dev.newStream(false);
        CudaStream s2 = dev.newStream(false);
        try (CudaEvent e = dev.newEvent(false); CudaEvent t = dev.newEvent(true)) {
            Gpu.kernels().kernel("spin").launch(s1, new int[] {1}, new int[] {32}, 0, 20_000_000L, 0L);
            s1.record(e);
            s2.waitFor(e);
            s2.record(t);
            assertFalse(t.isComplete(), "s2 waits for the ~10 ms spin on s1");
            t.synchronize();
            assertTrue(e.isComplete());
            assertThrows(IllegalStateException.class, () -> t.elapsedMillisSince(e));
        } finally {
            s1.close();
            s2.close();
        }
    }
}
