package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaSegmentSource;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.runtime.alloc.Allocation;
import dev.lantern.runtime.alloc.AllocatorConfig;
import dev.lantern.runtime.alloc.AllocatorStats;
import dev.lantern.runtime.alloc.CachingAllocator;
import dev.lantern.runtime.alloc.EventStreamSync;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The runtime's caching allocator over real cuMemAlloc segments and over CUDA VMM expandable
 * ranges: blocks hold their data while others come and go across two streams, and after
 * emptyCache the driver's free memory is back where it started.
 */
@Tag("gpu")
class CachingAllocatorGpuTest {
    @ParameterizedTest(name = "expandable={0}")
    @ValueSource(booleans = {false, true})
    void blocksKeepTheirDataAndMemoryGoesBack(boolean expandable) {
        CudaDevice dev = Gpu.device();
        CudaSegmentSource source = new CudaSegmentSource(dev);
        if (expandable) {
            assertNotNull(source.virtualMemory(), "the H200 supports VMM");
        }
        CudaStream s0 = dev.newStream(false);
        CudaStream s1 = dev.newStream(false);
        EventStreamSync sync = new EventStreamSync().register(0, s0).register(1, s1);
        CachingAllocator alloc = new CachingAllocator(source, sync,
                AllocatorConfig.defaults().withExpandableSegments(expandable));
        assertEquals(expandable, alloc.expandable());
        long freeBefore = dev.freeMemory();
        long seed = System.nanoTime();
        SplittableRandom r = new SplittableRandom(seed);
        record Live(Allocation a, int fill) {}
        List<Live> live = new ArrayList<>();
        try {
            for (int round = 0; round < 400; round++) {
                if (!live.isEmpty() && r.nextInt(3) == 0) {
                    Live l = live.remove(r.nextInt(live.size()));
                    check(dev, s0, l.a(), l.fill(), seed);
                    alloc.free(l.a(), Set.of(0L, 1L));
                } else {
                    // sizes from 1 KiB to 64 MiB, log-uniform: small and large pools both
                    long bytes = 4L * (long) Math.exp(r.nextDouble() * Math.log(16L << 20)) + 1024;
                    long stream = r.nextInt(2);
                    Allocation a = alloc.allocate(bytes, stream);
                    int fill = r.nextInt();
                    CudaStream s = stream == 0 ? s0 : s1;
                    s.memset32(view(dev, a), 0, fill, a.requested() / 4);
                    live.add(new Live(a, fill));
                }
            }
            for (Live l : live) {
                check(dev, s0, l.a(), l.fill(), seed);
                alloc.free(l.a(), Set.of(0L, 1L));
            }
            live.clear();
            dev.synchronize();
            AllocatorStats st = alloc.stats();
            System.out.printf("[gpu] allocator (expandable=%s): reserved %d MiB, %d segments, frag %.1f%%%n",
                    expandable, st.reserved() >> 20, st.segments(), st.allocFragPct());
            alloc.emptyCache();
            assertEquals(0, alloc.stats().reserved(), "emptyCache gives every segment back");
            long delta = freeBefore - dev.freeMemory();
            System.out.printf("[gpu] allocator (expandable=%s): free memory delta after emptyCache %d bytes%n",
                    expandable, delta);
            assertTrue(Math.abs(delta) <= (2L << 20), "free memory moved by " + delta + " bytes");
        } finally {
            s0.close();
            s1.close();
        }
    }

    @org.junit.jupiter.api.Test
    void serviceProviderOpensGpuZero() throws Exception {
        dev.lantern.runtime.alloc.SegmentSource src = new dev.lantern.cuda.engine.CudaSegmentSourceProvider().open();
        try {
            assertEquals("cuda:0", src.name());
            long seg = src.reserve(8L << 20);
            assertTrue(seg > 0);
            src.release(seg, 8L << 20);
            assertEquals(-1, src.reserve(1L << 50));
            assertNotNull(src.virtualMemory());
        } finally {
            ((AutoCloseable) src).close();
        }
        // the shared device is still usable after the provider closed its own reference
        assertTrue(Gpu.device().freeMemory() > 0);
    }

    static CudaStorage view(CudaDevice dev, Allocation a) {
        return CudaStorage.view(dev, a.address(), a.requested() / 4 * 4, () -> { });
    }

    /** Every word of the block still holds its fill: nothing else was handed its memory. */
    static void check(CudaDevice dev, CudaStream s, Allocation a, int fill, long seed) {
        dev.synchronize(); // the fill may have been queued on the other stream
        int words = (int) Math.min(a.requested() / 4, 1 << 16); // the first 256 KiB is enough to catch overlap
        float[] out = Gpu.download(s, view(dev, a), words);
        for (int i = 0; i < words; i++) {
            assertEquals(fill, Float.floatToRawIntBits(out[i]), "word " + i + " of block 0x"
                    + Long.toHexString(a.address()) + " (seed " + seed + ")");
        }
        // and the last word
        try (CudaStorage one = dev.allocatePinned(4)) {
            s.copy(view(dev, a), a.requested() / 4 * 4 - 4, one, 0, 4);
            s.synchronize();
            assertEquals(fill, one.hostSegment().get(java.lang.foreign.ValueLayout.JAVA_INT, 0), "last word");
        }
    }
}
