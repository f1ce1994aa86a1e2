package dev.lantern.runtime.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.runtime.Event;
import dev.lantern.runtime.Stream;
import dev.lantern.runtime.TensorStorage;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class CpuRuntimeTest {
    @Test
    void copyRoundTrip() {
        try (CpuDevice cpu = new CpuDevice();
                TensorStorage a = cpu.allocate(4096);
                TensorStorage b = cpu.allocate(4096);
                TensorStorage c = cpu.allocate(4096)) {
            assertEquals(0, a.address() % CpuStorage.ALIGNMENT);
            float[] data = new float[1024];
            SplittableRandom rng = new SplittableRandom(17);
            for (int i = 0; i < data.length; i++) {
                data[i] = (float) rng.nextGaussian();
            }
            MemorySegment.copy(data, 0, a.hostSegment(), ValueLayout.JAVA_FLOAT, 0, data.length);
            c.hostSegment().fill((byte) 0x7f); // poison
            Stream s = cpu.newStream(false);
            s.copy(a, 0, b, 0, 4096);
            s.copy(b, 0, c, 0, 4096);
            s.synchronize();
            float[] back = c.hostSegment().toArray(ValueLayout.JAVA_FLOAT);
            assertArrayEquals(data, back);
            assertThrows(IndexOutOfBoundsException.class, () -> s.copy(a, 1, b, 0, 4096));
        }
    }

    @Test
    void eventTimingIsNonNegative() {
        CpuDevice cpu = new CpuDevice();
        Stream s = cpu.newStream(true);
        assertTrue(s.highPriority());
        Event start = cpu.newEvent(true);
        Event end = cpu.newEvent(true);
        s.record(start);
        double sink = 0;
        for (int i = 0; i < 100_000; i++) {
            sink += Math.sqrt(i);
        }
        s.record(end);
        assertTrue(end.isComplete());
        float ms = end.elapsedMillisSince(start);
        assertTrue(ms >= 0 && sink > 0, "elapsed " + ms);
        assertThrows(IllegalStateException.class, () -> end.elapsedMillisSince(cpu.newEvent(true)));
    }
}
