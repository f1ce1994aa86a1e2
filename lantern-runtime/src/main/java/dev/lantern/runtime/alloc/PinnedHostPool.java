package dev.lantern.runtime.alloc;

import java.lang.foreign.MemorySegment;
import java.util.Set;

/**
 * A cache of host staging buffers for host/device copies: the caching allocator over a host
 * source, all on one host "stream" (id 0). A buffer that a copy on a device stream still reads
 * is released with that stream's id, and is reused only after a marker there completes, as in
 * PyTorch's CachingHostAllocator.
 */
public final class PinnedHostPool implements AutoCloseable {
    /** The host side is not ordered by any device stream. */
    private static final long HOST_STREAM = 0;

    /** A staging buffer: the allocation (to give back) and its bytes, exactly as many as requested. */
    public record HostBuffer(Allocation allocation, MemorySegment segment) {
    }

    private final HostSegmentSource source;
    private final CachingAllocator allocator;

    public PinnedHostPool(HostSegmentSource source, StreamSync sync) {
        this.source = source;
        this.allocator = new CachingAllocator(source, sync, AllocatorConfig.defaults());
    }

    /** A CPU pool: Arena-allocated host memory, synchronous markers. */
    public static PinnedHostPool cpu(long capacity) {
        return new PinnedHostPool(new ArenaHostSource(capacity), StreamSync.SYNCHRONOUS);
    }

    public HostBuffer acquire(long bytes) {
        Allocation a = allocator.allocate(bytes, HOST_STREAM);
        return new HostBuffer(a, source.view(a.address(), bytes));
    }

    /** Gives a buffer back; {@code copyStreams} are the device streams whose copies may still read or write it. */
    public void release(HostBuffer buffer, Set<Long> copyStreams) {
        allocator.free(buffer.allocation(), copyStreams);
    }

    public void release(HostBuffer buffer) {
        release(buffer, Set.of());
    }

    public AllocatorStats stats() {
        return allocator.stats();
    }

    public void emptyCache() {
        allocator.emptyCache();
    }

    /** Releases the cache; closes the source when it is closeable. Buffers still held become invalid. */
    @Override
    public void close() {
        allocator.emptyCache();
        if (source instanceof AutoCloseable c) {
            try {
                c.close();
            } catch (Exception e) {
                throw new IllegalStateException("closing host source " + source.name(), e);
            }
        }
    }
}
