package dev.lantern.runtime.alloc;

import java.util.List;

/**
 * One segment in a {@link CachingAllocator#snapshot()}, as PyTorch's memory_snapshot gives it:
 * where it is, which stream and pool own it, and its blocks in address order.
 */
public record SegmentInfo(long address, long size, long stream, boolean small, List<BlockInfo> blocks) {

    public enum State { FREE, ALLOCATED, PENDING }

    public record BlockInfo(long address, long size, State state) {
    }

    public SegmentInfo {
        blocks = List.copyOf(blocks);
    }

    public long freeBytes() {
        return blocks.stream().filter(b -> b.state() == State.FREE).mapToLong(BlockInfo::size).sum();
    }
}
