package dev.lantern.runtime.alloc;

/**
 * Where the caching allocator gets its segments from: {@code cuMemAlloc}/{@code cuMemFree} on
 * CUDA, a simulator in tests. Addresses are opaque 64-bit values; the allocator never
 * dereferences them.
 */
public interface SegmentSource {
    /**
     * Reserves a segment of exactly {@code bytes}, or returns {@code -1} when the device has
     * no memory for it (the allocator then frees its cache and retries, then throws).
     */
    long reserve(long bytes);

    /** Returns a segment obtained from {@link #reserve}. */
    void release(long address, long bytes);

    /** A short name for statistics and errors: "sim", "cuda:0". */
    String name();

    /**
     * Virtual-memory management for expandable segments, or null when this source only hands
     * out whole segments. The allocator prefers it when present (see {@link VirtualMemory}).
     */
    default VirtualMemory virtualMemory() {
        return null;
    }
}
