package dev.lantern.runtime.alloc;

/**
 * Memory the allocator holds from its source, owned by one stream and one pool for its whole
 * life: either one fixed reservation ({@link SegmentSource#reserve}), or an expandable range
 * whose first {@code size} bytes are mapped and which grows and shrinks at its end.
 */
final class Segment {
    private final long address;
    private final long stream;
    /** Pools: small (at most 1 MiB), mid (below 10 MiB; expandable mode only), large. */
    static final int SMALL = 0, MID = 1, LARGE = 2, POOLS = 3;

    private final int pool;
    /** Address space reserved, for an expandable range; 0 for a fixed segment. */
    final long rangeSize;
    /** Bytes reserved (fixed) or mapped (expandable), from {@code address} up. */
    long size;
    /** The block that ends at {@code address + size}. */
    Block tail;

    Segment(long address, long size, long stream, int pool, long rangeSize) {
        this.address = address;
        this.size = size;
        this.stream = stream;
        this.pool = pool;
        this.rangeSize = rangeSize;
    }

    /** A probe used only to build comparator keys. */
    static Segment probe(long stream) {
        return new Segment(0, 0, stream, LARGE, 0);
    }

    long address() {
        return address;
    }

    long size() {
        return size;
    }

    long stream() {
        return stream;
    }

    boolean small() {
        return pool == SMALL;
    }

    int pool() {
        return pool;
    }

    boolean expandable() {
        return rangeSize > 0;
    }
}
