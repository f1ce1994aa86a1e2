package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaEvent;
import dev.lantern.cuda.driver.CudaStream;
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
            var spin = Gpu.kernels().kernel("spin"); // compile and load before the clock starts
            s.record(a);
            spin.launch(s, new int[] {1}, new int[] {32}, 0, cycles, 0L);
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

    /**
     * A non-timing event orders two streams: s2's timing event, recorded after waiting on s1's
     * event, lands after s1's ~10 ms spin on the GPU timeline. (Judged by timing events, not
     * by polling from the host, which can be slower than the spin on a first call.)
     */
    @Test
    void eventsWithoutTimingRefuseElapsedAndStillOrderStreams() {
        CudaDevice dev = Gpu.device();
        CudaStream s1 = dev.newStream(false);
        CudaStream s2 = dev.newStream(false);
        try (CudaEvent e = dev.newEvent(false); CudaEvent a = dev.newEvent(true); CudaEvent t = dev.newEvent(true);
             CudaEvent a2 = dev.newEvent(true)) {
            long cycles = 20_000_000L; // ~10 ms
            double spinMs = cycles / (dev.target().clockKHz() * 1e3) * 1e3;
            var spin = Gpu.kernels().kernel("spin"); // compile and load before the clock starts
            s1.record(a);
            s2.record(a2);
            spin.launch(s1, new int[] {1}, new int[] {32}, 0, cycles, 0L);
            s1.record(e);
            s2.waitFor(e);
            s2.record(t);
            t.synchronize();
            assertTrue(e.isComplete());
            float waited = t.elapsedMillisSince(a2);
            System.out.printf("[gpu] s2 waited %.3f ms for s1's %.3f ms spin%n", waited, spinMs);
            assertTrue(waited > 0.5 * spinMs, "s2's event came " + waited + " ms after its start");
            assertFalse(t.elapsedMillisSince(a) < 0.5 * spinMs);
            assertThrows(IllegalStateException.class, () -> t.elapsedMillisSince(e));
        } finally {
            s1.close();
            s2.close();
        }
    }
}
