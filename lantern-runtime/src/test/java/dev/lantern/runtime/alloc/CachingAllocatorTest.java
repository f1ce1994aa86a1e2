package dev.lantern.runtime.alloc;

import static dev.lantern.runtime.alloc.AllocatorConfig.MiB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class CachingAllocatorTest {
    private static final long BASE = SimulatedSegmentSource.BASE;
    private static final AllocatorConfig CLASSIC = AllocatorConfig.pytorchDefaults();

    @Test
    void roundsSizesAndPicksSegmentSizes() {
        AllocatorConfig c = AllocatorConfig.defaults();
        assertEquals(512, c.roundSize(0));
        assertEquals(512, c.roundSize(1));
        assertEquals(512, c.roundSize(512));
        assertEquals(1024, c.roundSize(513));
        assertEquals(MiB, c.roundSize(MiB));
        assertEquals(40 * MiB, c.roundSize(40 * MiB));        // on a 8 MiB step between 32 and 64 MiB
        assertEquals(48 * MiB, c.roundSize(41 * MiB));
        assertEquals(31 * MiB + 512, c.roundSize(31 * MiB + 1)); // below 32 MiB: 512 B granularity
        assertEquals(2 * MiB, c.segmentSize(MiB));
        assertEquals(20 * MiB, c.segmentSize(5 * MiB));
        assertEquals(12 * MiB, c.segmentSize(11 * MiB));
        assertTrue(c.isSmall(MiB));
        assertTrue(!c.isSmall(MiB + 512));
    }

    /** A block held for a session is not rounded up to a size class: 266 MiB holds 266 MiB, not 320. */
    @Test
    void longLivedBlocksKeepTheirSize() {
        AllocatorConfig c = AllocatorConfig.defaults();
        assertEquals(320 * MiB, c.roundSize(266 * MiB));
        CachingAllocator a = new CachingAllocator(new SimulatedSegmentSource(2048 * MiB), StreamSync.SYNCHRONOUS, c);
        Allocation arena = a.allocate(266 * MiB + 100, 1, true);
        assertEquals(266 * MiB + 512, a.stats().allocated());
        Allocation weights = a.allocate(1064 * MiB, 1, true);
        assertEquals(1330 * MiB + 512, a.stats().allocated());
        Allocation step = a.allocate(266 * MiB, 1); // a per-step block keeps the size classes
        assertEquals(1650 * MiB + 512, a.stats().allocated());
        a.free(step);
        a.free(weights);
        a.free(arena);
        assertEquals(0, a.stats().allocated());
    }

    @Test
    void splitsAndCoalesces() {
        SimulatedSegmentSource src = new SimulatedSegmentSource(64 * MiB);
        CachingAllocator a = new CachingAllocator(src, StreamSync.SYNCHRONOUS, CLASSIC);
        Allocation x = a.allocate(1000, 0);
        Allocation y = a.allocate(1000, 0);
        assertEquals(BASE, x.address());
        assertEquals(BASE + 1024, y.address());
        assertEquals(1024, x.size());
        assertEquals(1, a.snapshot().size());
        assertEquals(3, a.snapshot().getFirst().blocks().size()); // x, y, the rest
        a.free(x);
        a.free(y);
        List<SegmentInfo.BlockInfo> blocks = a.snapshot().getFirst().blocks();
        assertEquals(1, blocks.size());
        assertEquals(2 * MiB, blocks.getFirst().size());
        assertEquals(SegmentInfo.State.FREE, blocks.getFirst().state());
    }

    @Test
    void bestFitTakesTheSmallestHoleThatFits() {
        CachingAllocator a = new CachingAllocator(new SimulatedSegmentSource(64 * MiB), StreamSync.SYNCHRONOUS, CLASSIC);
        Allocation big = a.allocate(8192, 0);
        Allocation sep1 = a.allocate(512, 0);
        Allocation small = a.allocate(4096, 0);
        Allocation sep2 = a.allocate(512, 0);
        a.free(big);   // hole of 8192 at BASE
        a.free(small); // hole of 4096 at BASE + 8704
        Allocation got = a.allocate(3000, 0);
        assertEquals(small.address(), got.address());
        Allocation got2 = a.allocate(6000, 0);
        assertEquals(big.address(), got2.address());
        assertEquals(List.of(sep1.address(), sep2.address()), List.of(BASE + 8192, BASE + 8192 + 512 + 4096));
    }

    @Test
    void streamsHaveTheirOwnPools() {
        CachingAllocator a = new CachingAllocator(new SimulatedSegmentSource(64 * MiB), StreamSync.SYNCHRONOUS, CLASSIC);
        Allocation x = a.allocate(4096, 0);
        a.free(x);
        Allocation onOther = a.allocate(4096, 1);
        assertNotEquals(x.address(), onOther.address()); // stream 1 gets its own segment
        assertEquals(2, a.stats().segments());
        assertEquals(x.address(), a.allocate(4096, 0).address()); // stream 0 reuses at once
    }

    @Test
    void crossStreamFreeWaitsForTheMarker() {
        SimulatedStreamSync sync = new SimulatedStreamSync(10);
        CachingAllocator a = new CachingAllocator(new SimulatedSegmentSource(64 * MiB), sync, CLASSIC);
        Allocation x = a.allocate(4096, 0);
        a.free(x, Set.of(1L));
        assertEquals(4096, a.stats().pendingBytes());
        Allocation y = a.allocate(4096, 0);
        assertNotEquals(x.address(), y.address()); // stream 1 may still be reading x
        a.free(y);
        sync.tick(10);
        assertEquals(x.address(), a.allocate(4096, 0).address());
        assertEquals(0, a.stats().pendingBytes());
        assertEquals(1, sync.recorded());
    }

    @Test
    void expandableRangeSharesFreeMemoryAcrossStreamsAfterTheirMarkers() {
        SimulatedStreamSync sim = new SimulatedStreamSync(10);
        StreamSync noDeviceWaits = sim::record; // only host-side completion counts
        CachingAllocator a = new CachingAllocator(new SimulatedSegmentSource(256 * MiB), noDeviceWaits,
                AllocatorConfig.defaults());
        assertTrue(a.expandable());
        Allocation x = a.allocate(30 * MiB, 0);
        a.allocate(12 * MiB, 0); // keeps x's block from merging into the free tail
        a.free(x);
        assertEquals(x.address(), a.allocate(30 * MiB, 0).address() ); // own stream: at once
        Allocation z = a.allocate(30 * MiB, 0);
        a.free(z);
        Allocation other = a.allocate(30 * MiB, 1);
        assertNotEquals(z.address(), other.address()); // stream 0's marker has not completed
        sim.tick(10);
        Allocation w = a.allocate(30 * MiB, 1);
        assertEquals(z.address(), w.address());
        // With device-side waits the other stream takes it at once, ordered by a wait.
        CachingAllocator b = new CachingAllocator(new SimulatedSegmentSource(256 * MiB), sim, AllocatorConfig.defaults());
        Allocation p = b.allocate(30 * MiB, 0);
        b.allocate(12 * MiB, 0);
        b.free(p);
        assertEquals(p.address(), b.allocate(30 * MiB, 1).address());
        assertEquals(1, sim.streamWaits());
    }

    @Test
    void midRangeGivesBackItsIdleTailBeyondTheSlack() {
        SimulatedSegmentSource src = new SimulatedSegmentSource(256 * MiB);
        CachingAllocator a = new CachingAllocator(src, StreamSync.SYNCHRONOUS, AllocatorConfig.defaults());
        List<Allocation> xs = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            xs.add(a.allocate(5 * MiB, i % 2)); // mid pool, two streams, one shared range
        }
        assertEquals(50 * MiB, a.stats().reserved());
        assertEquals(1, a.stats().segments());
        xs.forEach(a::free);
        a.allocate(512, 0); // the next call trims: mid keeps 20 MiB, small maps 2 MiB
        assertEquals(22 * MiB, a.stats().reserved());
        assertEquals(22 * MiB, src.liveBytes());
    }

    @Test
    void eventStreamSyncOrdersCpuStreams() {
        try (dev.lantern.runtime.cpu.CpuDevice cpu = new dev.lantern.runtime.cpu.CpuDevice()) {
            EventStreamSync sync = new EventStreamSync().register(0, cpu.newStream(false)).register(1, cpu.newStream(false));
            CachingAllocator a = new CachingAllocator(new SimulatedSegmentSource(256 * MiB), sync, AllocatorConfig.defaults());
            Allocation x = a.allocate(30 * MiB, 0);
            a.allocate(12 * MiB, 0);
            a.free(x, Set.of(1L));
            assertEquals(x.address(), a.allocate(30 * MiB, 1).address()); // CPU events complete at once
        }
    }

    @Test
    void oomFreesTheCacheRetriesThenThrowsWithSizes() {
        SimulatedSegmentSource src = new SimulatedSegmentSource(40 * MiB);
        CachingAllocator a = new CachingAllocator(src, StreamSync.SYNCHRONOUS, CLASSIC);
        a.free(a.allocate(15 * MiB, 0)); // caches a 20 MiB segment
        Allocation big = a.allocate(30 * MiB, 1); // 20 + 30 > 40: release the cache, retry
        assertEquals(1, a.stats().retries());
        assertEquals(30 * MiB, a.stats().reserved());
        DeviceOutOfMemoryException e = assertThrows(DeviceOutOfMemoryException.class, () -> a.allocate(30 * MiB, 1));
        assertEquals(30 * MiB, e.requested());
        assertEquals(30 * MiB, e.reserved());
        assertEquals(30 * MiB, e.allocated());
        assertEquals(0, e.largestFree());
        assertTrue(e.getMessage().contains("requested 31457280 bytes"), e.getMessage());
        assertTrue(e.getMessage().contains("reserved 31457280 bytes"), e.getMessage());
        assertTrue(e.getMessage().contains("allocated 31457280 bytes"), e.getMessage());
        assertTrue(e.getMessage().contains("largest free block 0 bytes"), e.getMessage());
        assertEquals(1, a.stats().ooms());
        a.free(big);
        a.emptyCache();
        assertEquals(0, src.liveBytes());
        assertEquals(0, src.badReleases());
    }

    @Test
    void oomInExpandableModeAlsoTypesTheError() {
        SimulatedSegmentSource src = new SimulatedSegmentSource(64 * MiB);
        CachingAllocator a = new CachingAllocator(src, StreamSync.SYNCHRONOUS, AllocatorConfig.defaults());
        Allocation x = a.allocate(40 * MiB, 0);
        DeviceOutOfMemoryException e = assertThrows(DeviceOutOfMemoryException.class, () -> a.allocate(40 * MiB, 0));
        assertEquals(40 * MiB, e.allocated());
        a.free(x);
        a.emptyCache();
        assertEquals(0, src.liveBytes());
        assertEquals(0, src.liveRanges());
    }

    @Test
    void samePlacementForTheSameSequence() {
        for (AllocatorConfig c : List.of(CLASSIC, AllocatorConfig.defaults())) {
            assertEquals(trace(c, 7), trace(c, 7));
            assertNotEquals(trace(c, 7), trace(c, 8));
        }
    }

    private static List<Long> trace(AllocatorConfig config, long seed) {
        SimulatedStreamSync sync = new SimulatedStreamSync(3);
        CachingAllocator a = new CachingAllocator(new SimulatedSegmentSource(8L << 30), sync, config);
        SplittableRandom rng = new SplittableRandom(seed);
        List<Allocation> held = new ArrayList<>();
        List<Long> addresses = new ArrayList<>();
        for (int i = 0; i < 5000; i++) {
            sync.tick(1);
            if (held.isEmpty() || rng.nextInt(3) > 0 && held.size() < 64) {
                Allocation x = a.allocate((long) Math.exp(rng.nextDouble(Math.log(256), Math.log(64 << 20))),
                        rng.nextInt(3));
                held.add(x);
                addresses.add(x.address());
            } else {
                Allocation x = held.remove(rng.nextInt(held.size()));
                a.free(x, rng.nextInt(4) == 0 ? Set.of((x.stream() + 1) % 3) : Set.of());
            }
        }
        return addresses;
    }

    @Test
    void statisticsMatchHandComputedValues() {
        CachingAllocator a = new CachingAllocator(new SimulatedSegmentSource(64 * MiB), StreamSync.SYNCHRONOUS, CLASSIC);
        Allocation x = a.allocate(1000, 0);   // 1024 at BASE
        Allocation y = a.allocate(3000, 0);   // 3072 at BASE + 1024
        AllocatorStats s = a.stats();
        assertEquals(2 * MiB, s.reserved());
        assertEquals(4096, s.allocated());
        assertEquals(4000, s.requested());
        assertEquals(2 * MiB - 4096, s.freeBytes());
        assertEquals(0.0, s.allocFragPct(), 0.0); // one free block
        assertEquals(100.0 * (1 - 4096.0 / (2 * MiB)), s.wastePct(), 1e-12);
        a.free(x); // free blocks: 1024 and 2 MiB - 4096
        s = a.stats();
        assertEquals(2 * MiB - 3072, s.freeBytes());
        assertEquals(2 * MiB - 4096, s.largestFree());
        assertEquals(100.0 * (1 - (2 * MiB - 4096.0) / (2 * MiB - 3072.0)), s.allocFragPct(), 1e-12);
        assertEquals(100.0 * (1 - 3072.0 / (2 * MiB)), s.wastePct(), 1e-12);
        assertEquals(1, s.activeBlocks());
        assertEquals(1, s.segments());
        a.free(y);
        a.emptyCache();
        s = a.stats();
        assertEquals(0.0, s.allocFragPct(), 0.0);
        assertEquals(0.0, s.wastePct(), 0.0);
        assertEquals(0, s.reserved());
    }

    @Test
    void doubleFreeIsRejected() {
        CachingAllocator a = new CachingAllocator(new SimulatedSegmentSource(64 * MiB));
        Allocation x = a.allocate(4096, 0);
        a.free(x);
        Allocation reused = a.allocate(4096, 0);
        assertEquals(x.address(), reused.address());
        assertThrows(IllegalStateException.class, () -> a.free(x)); // stale handle, same address
        a.free(reused);
    }

    @Test
    void simulatorDetectsBadReleases() {
        SimulatedSegmentSource src = new SimulatedSegmentSource(64 * MiB);
        long s = src.reserve(MiB);
        src.release(s, MiB);
        assertThrows(IllegalStateException.class, () -> src.release(s, MiB));
        assertEquals(1, src.badReleases());
        assertEquals(2, src.log().size()); // reserve, release: the bad release is refused, not logged
        assertEquals(-1, src.reserve(65 * MiB));
        assertEquals(1, src.refusals());
    }

    @Test
    void pinnedHostPoolStagesBytes() {
        try (PinnedHostPool pool = PinnedHostPool.cpu(64 * MiB)) {
            PinnedHostPool.HostBuffer b = pool.acquire(1000);
            assertEquals(1000, b.segment().byteSize());
            SplittableRandom rng = new SplittableRandom(3);
            byte[] data = new byte[1000];
            rng.nextBytes(data);
            b.segment().copyFrom(java.lang.foreign.MemorySegment.ofArray(data));
            assertEquals(data[999], b.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 999));
            pool.release(b, Set.of(2L));
            PinnedHostPool.HostBuffer again = pool.acquire(1000);
            assertEquals(b.allocation().address(), again.allocation().address());
            pool.release(again);
            pool.emptyCache();
            assertEquals(0, pool.stats().reserved());
        }
    }
}
