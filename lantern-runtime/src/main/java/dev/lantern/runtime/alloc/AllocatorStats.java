package dev.lantern.runtime.alloc;

/**
 * A snapshot of a {@link CachingAllocator}. All byte figures are block sizes (requests
 * rounded), except {@code requested}.
 *
 * @param reserved      bytes held from the source, over all segments
 * @param allocated     bytes in blocks handed out and not yet freed
 * @param requested     bytes asked for by the live allocations (before rounding)
 * @param freeBytes     bytes in cached free blocks (not counting blocks waiting for markers)
 * @param pendingBytes  bytes freed by the caller but still waiting for other streams' markers
 * @param largestFree   the largest single cached free block
 * @param activeBlocks  live allocations
 * @param segments      segments held from the source
 * @param retries       times a reservation failed and the cache was freed to retry it
 * @param ooms          typed out-of-memory errors thrown
 */
public record AllocatorStats(
        long reserved,
        long allocated,
        long requested,
        long freeBytes,
        long pendingBytes,
        long largestFree,
        long activeBlocks,
        long segments,
        long retries,
        long ooms) {

    /** 100 × (1 − largest free block ÷ total free bytes); 0 when nothing is free. */
    public double allocFragPct() {
        return fragPct(largestFree, freeBytes);
    }

    /** 100 × (1 − allocated ÷ reserved); 0 when nothing is reserved. */
    public double wastePct() {
        return wastePct(allocated, reserved);
    }

    public static double fragPct(long largestFree, long freeBytes) {
        return freeBytes == 0 ? 0.0 : 100.0 * (1.0 - (double) largestFree / freeBytes);
    }

    public static double wastePct(long allocated, long reserved) {
        return reserved == 0 ? 0.0 : 100.0 * (1.0 - (double) allocated / reserved);
    }
}
