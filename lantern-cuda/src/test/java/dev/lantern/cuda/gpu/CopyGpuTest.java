package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.runtime.TensorStorage;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** H2D/D2H/D2D copies are bit-exact, from pinned and pageable memory, on fresh random bytes. */
@Tag("gpu")
class CopyGpuTest {
    static final long BYTES = (64L << 20) + 12345; // 64 MiB and an odd tail

    static void fillRandom(MemorySegment seg, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        long n = seg.byteSize();
        long i = 0;
        for (; i + 8 <= n; i += 8) {
            seg.set(ValueLayout.JAVA_LONG_UNALIGNED, i, r.nextLong());
        }
        for (; i < n; i++) {
            seg.set(ValueLayout.JAVA_BYTE, i, (byte) r.nextInt());
        }
    }

    void roundTrip(TensorStorage src, TensorStorage dst, String what) {
        CudaDevice dev = Gpu.device();
        long seed = System.nanoTime();
        fillRandom(src.hostSegment(), seed);
        dst.hostSegment().fill((byte) 0xA5); // poison
        CudaStream s = dev.newStream(false);
        try (CudaStorage d1 = dev.allocate(BYTES); CudaStorage d2 = dev.allocate(BYTES)) {
            s.memset(d1, 0, (byte) 0x5A, BYTES);
            s.memset(d2, 0, (byte) 0x3C, BYTES);
            s.copy(src, 0, d1, 0, BYTES);             // H2D
            s.copy(d1, 0, d2, 0, BYTES);              // D2D
            s.copy(d2, 0, dst, 0, BYTES);             // D2H
            s.synchronize();
            long mismatch = src.hostSegment().mismatch(dst.hostSegment());
            assertEquals(-1, mismatch, what + ": first differing byte (seed " + seed + ")");
            // offsets: the middle third, shifted by an odd number of bytes
            dst.hostSegment().fill((byte) 0xA5);
            long off = BYTES / 3 + 1;
            long len = BYTES / 3;
            s.copy(src, off, d2, 7, len);
            s.copy(d2, 7, dst, off, len);
            s.synchronize();
            assertEquals(-1, src.hostSegment().asSlice(off, len).mismatch(dst.hostSegment().asSlice(off, len)),
                    what + " with offsets (seed " + seed + ")");
            assertEquals((byte) 0xA5, dst.hostSegment().get(ValueLayout.JAVA_BYTE, off - 1), "nothing before");
            assertEquals((byte) 0xA5, dst.hostSegment().get(ValueLayout.JAVA_BYTE, off + len), "nothing after");
        } finally {
            s.close();
        }
    }

    @Test
    void pinnedRoundTripIsBitExact() {
        try (CudaStorage src = Gpu.device().allocatePinned(BYTES); CudaStorage dst = Gpu.device().allocatePinned(BYTES)) {
            roundTrip(src, dst, "pinned");
        }
    }

    @Test
    void pageableRoundTripIsBitExact() {
        try (HostBuffer src = new HostBuffer(BYTES); HostBuffer dst = new HostBuffer(BYTES)) {
            roundTrip(src, dst, "pageable");
        }
    }

    @Test
    void memset32WritesEveryWord() {
        CudaDevice dev = Gpu.device();
        int n = 1 << 20;
        CudaStream s = dev.defaultStream();
        try (CudaStorage d = dev.allocate(4L * n)) {
            s.memset32(d, 0, Float.floatToRawIntBits(Float.NaN), n);
            s.memset32(d, 4, 0x3f800000, n - 2); // 1.0f everywhere but the ends
            float[] out = Gpu.download(s, d, n);
            assertTrue(Float.isNaN(out[0]) && Float.isNaN(out[n - 1]));
            for (int i = 1; i < n - 1; i++) {
                assertEquals(1.0f, out[i], "at " + i);
            }
            assertNotEquals(0, n);
        }
    }
}
