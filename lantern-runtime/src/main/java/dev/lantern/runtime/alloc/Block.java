package dev.lantern.runtime.alloc;

import java.util.Comparator;

/**
 * A piece of a segment: free, allocated, or freed but waiting for other streams' markers.
 * Blocks of one segment form an address-ordered doubly linked list, so that a freed block
 * finds its neighbours in O(1) to coalesce with them. Internal to the allocator: callers
 * hold {@link Allocation} values instead, so that a stale handle cannot free a reused block.
 *
 * <p>Invariant: neighbours are never both {@link State#FREE} (they would have been merged),
 * and a merge always keeps the lower block, so a segment's head block never changes.
 */
final class Block {
    enum State { FREE, ALLOCATED, PENDING }

    /** Free lists order: stream, then size, then address, so a ceiling lookup is best-fit on one stream. */
    static final Comparator<Block> BY_STREAM_SIZE_ADDRESS = Comparator
            .comparingLong((Block b) -> b.segment.stream())
            .thenComparingLong(b -> b.size)
            .thenComparingLong(b -> b.address);

    /** The global free index: size, then address; its last element is the largest free block. */
    static final Comparator<Block> BY_SIZE_ADDRESS = Comparator
            .comparingLong((Block b) -> b.size)
            .thenComparingLong(b -> b.address);

    /** Expandable ranges keep free blocks in address order: first fit packs toward the start. */
    static final Comparator<Block> BY_ADDRESS = Comparator.comparingLong((Block b) -> b.address);

    /**
     * A stream that used this memory and the marker recorded there when it was freed. Kept on
     * free blocks of shared (expandable) ranges: another stream may take the block only once
     * the marker has completed.
     */
    record Use(long seq, StreamSync.Marker marker) {
    }

    final Segment segment;
    final long address;
    long size;
    Block prev;
    Block next;
    State state = State.FREE;
    /** Set while ALLOCATED: the id of the live {@link Allocation} and the bytes asked for. */
    long allocationId;
    long requested;
    /** The stream of the live allocation. */
    long stream;
    /** Free blocks of shared ranges: stream id -> its latest use; null when no use is outstanding. */
    java.util.TreeMap<Long, Use> uses;

    Block(Segment segment, long address, long size) {
        this.segment = segment;
        this.address = address;
        this.size = size;
    }

    /** A lookup key for {@link #BY_STREAM_SIZE_ADDRESS}: the smallest block of {@code size} on {@code stream}. */
    static Block key(Segment probe, long size) {
        return new Block(probe, Long.MIN_VALUE, size);
    }

    boolean isWholeSegment() {
        return prev == null && next == null;
    }

    @Override
    public String toString() {
        return "Block[0x" + Long.toHexString(address) + ", " + size + " B, " + state + ", stream "
                + segment.stream() + "]";
    }

    /** Takes this block out of its segment's list (it has a predecessor: a head is never unlinked). */
    void unlink() {
        prev.next = next;
        if (next != null) {
            next.prev = prev;
        } else {
            segment.tail = prev;
        }
    }
}
