package dev.lantern.runtime.alloc;

import java.lang.foreign.MemorySegment;

/**
 * A segment source of host-visible memory: on the CPU, Arena-allocated segments
 * ({@link ArenaHostSource}); on CUDA, page-locked memory from {@code cuMemHostAlloc}.
 */
public interface HostSegmentSource extends SegmentSource {
    /** A view of {@code bytes} at {@code address}, inside a segment this source reserved. */
    MemorySegment view(long address, long bytes);
}
