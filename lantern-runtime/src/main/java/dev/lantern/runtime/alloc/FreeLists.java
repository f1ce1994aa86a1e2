package dev.lantern.runtime.alloc;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * The cached free blocks: one ordered set per pool (small, mid, large) in the order a pool is
 * searched (by address in expandable mode: first fit over a shared range; else by stream, size,
 * address: best fit among the stream's own segments), one set of all by size (the largest free
 * block of the statistics), and their total bytes. The sets are keyed on size: a block's size
 * changes only while it is outside them.
 */
final class FreeLists {
    private final List<TreeSet<Block>> pools = new ArrayList<>();
    private final TreeSet<Block> bySize = new TreeSet<>(Block.BY_SIZE_ADDRESS);
    private final boolean byAddress;
    private long bytes;

    FreeLists(boolean byAddress) {
        this.byAddress = byAddress;
        for (int p = 0; p < Segment.POOLS; p++) {
            pools.add(new TreeSet<>(byAddress ? Block.BY_ADDRESS : Block.BY_STREAM_SIZE_ADDRESS));
        }
    }

    void add(Block b) {
        pools.get(b.segment.pool()).add(b);
        bySize.add(b);
        bytes += b.size;
    }

    void remove(Block b) {
        pools.get(b.segment.pool()).remove(b);
        bySize.remove(b);
        bytes -= b.size;
    }

    /** Pool {@code index}'s free blocks, in its search order. */
    TreeSet<Block> pool(int index) {
        return pools.get(index);
    }

    /** Every free block, pool by pool. */
    void forEach(Consumer<Block> action) {
        pools.forEach(set -> set.forEach(action));
    }

    long bytes() {
        return bytes;
    }

    /** The largest free block's size, 0 when none. */
    long largest() {
        return bySize.isEmpty() ? 0 : bySize.last().size;
    }

    /**
     * A cached block of pool {@code poolIndex} that {@code stream} may take for {@code size}
     * bytes, or null: first fit by address over a shared range, else best fit among the stream's segments.
     */
    Block bestFit(long stream, long size, int poolIndex, AllocatorConfig config, StreamSync sync) {
        TreeSet<Block> pool = pools.get(poolIndex);
        if (byAddress) {
            // Shared range: address-ordered first fit among blocks this stream may use. It keeps
            // live blocks packed at the start and the free space in one piece at the end. A block
            // whose other-stream markers are still running is taken only when none is usable, and
            // only if the stream can be made to wait for them on the device (no host stall).
            Block blocked = null;
            for (Block b : pool) {
                if (b.size >= size) {
                    if (BlockUses.usableBy(b, stream)) {
                        return b;
                    }
                    if (blocked == null) {
                        blocked = b;
                    }
                }
            }
            if (blocked != null && BlockUses.waitForUses(blocked, stream, sync)) {
                return blocked;
            }
            return null;
        }
        Block b = pool.ceiling(Block.key(Segment.probe(stream), size));
        if (b == null || b.segment.stream() != stream
                || (!b.segment.expandable() && !config.mayServe(b.size, size))) {
            return null;
        }
        return b;
    }
}
