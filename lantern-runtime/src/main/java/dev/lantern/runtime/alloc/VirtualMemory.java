package dev.lantern.runtime.alloc;

/**
 * Virtual-memory management for expandable segments, as CUDA's VMM API gives it
 * ({@code cuMemAddressReserve}, {@code cuMemCreate} + {@code cuMemMap} + {@code cuMemSetAccess},
 * {@code cuMemUnmap} + {@code cuMemRelease}, {@code cuMemAddressFree}). With it the allocator
 * keeps one address range per stream and pool and maps physical pages at its end as it grows,
 * so free memory stays contiguous instead of being split across separate segments (PyTorch's
 * {@code expandable_segments:True}).
 */
public interface VirtualMemory {
    /** Mapping granularity in bytes (2 MiB on current GPUs); every map and unmap is a multiple of it. */
    long pageSize();

    /** Address space to reserve for one range: enough to map all of the device's memory into it. */
    long rangeSize();

    /** Reserves {@code bytes} of address space with nothing behind it; -1 when none is left. */
    long reserveRange(long bytes);

    /** Backs {@code [address, address + bytes)} with physical memory; false when the device is full. */
    boolean map(long address, long bytes);

    /** Gives back the physical memory behind a mapped range (page-aligned, previously mapped). */
    void unmap(long address, long bytes);

    /** Frees address space obtained from {@link #reserveRange}; nothing in it may be mapped. */
    void releaseRange(long address, long bytes);
}
