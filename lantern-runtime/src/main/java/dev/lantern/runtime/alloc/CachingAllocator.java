package dev.lantern.runtime.alloc;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A device-independent caching allocator over a {@link SegmentSource}, after PyTorch's
 * CUDACachingAllocator. docs/adr/0004-caching-allocator.md gives the rules and their reasons.
 *
 * <ol>
 * <li>Sizes are rounded ({@link AllocatorConfig#roundSize}); requests up to 1 MiB come from the
 *     small pool, the rest from the large pool (and, in expandable mode, 1-10 MiB from a mid pool).</li>
 * <li>Fixed segments (a source without {@link VirtualMemory}, or
 *     {@link AllocatorConfig#pytorchDefaults()}): a request takes the best-fitting cached free
 *     block of its stream and pool, the smallest large enough, lowest address on ties; a block
 *     freed on its own stream is reusable there at once, one that other streams used waits
 *     until a {@link StreamSync} marker on each of them completes.</li>
 * <li>Expandable mode ({@link AllocatorConfig#defaults()} over a source with virtual memory):
 *     one address range per pool, shared by all streams and grown by mapping pages at its end;
 *     address-ordered first fit; a free block carries a marker per stream that used it, and
 *     another stream takes it once they complete, or at once with a device-side wait.</li>
 * <li>A block larger than needed is split when the remainder is worth keeping
 *     ({@link AllocatorConfig#shouldSplit}); a freed block merges with free neighbours.</li>
 * <li>When the source is full, every entirely free segment is released and every range's free
 *     tail unmapped (after waiting for pending markers), and the request retried; if that fails
 *     too, a {@link DeviceOutOfMemoryException} is thrown.</li>
 * </ol>
 *
 * <p>Deterministic: only TreeMaps, TreeSets and insertion-ordered queues are iterated, so the
 * same sequence of calls on a deterministic source gives the same addresses. Thread-safe: every
 * public method holds the allocator's lock, as PyTorch's does.
 */
public final class CachingAllocator {
    private final SegmentSource source;
    private final StreamSync sync;
    private final AllocatorConfig config;
    private final VirtualMemory vm; // null: fixed segments only

    private final TreeMap<Long, Segment> segments = new TreeMap<>();
    private final TreeMap<Long, Block> heads = new TreeMap<>(); // segment address -> its first block
    private final TreeMap<Long, Block> live = new TreeMap<>(); // allocated blocks by address
    private final FreeLists free;
    private final PendingFrees pending = new PendingFrees();
    private final Segment[] ranges = new Segment[Segment.POOLS]; // expandable mode: one shared range per pool
    private long useSeq;

    /** The stream id of shared ranges in snapshots: they belong to no one stream. */
    public static final long SHARED = -1;

    private long nextId = 1;
    private long reserved, allocated, requested, retries, ooms;

    public CachingAllocator(SegmentSource source, StreamSync sync, AllocatorConfig config) {
        this.source = source;
        this.sync = sync;
        this.config = config;
        this.vm = config.expandableSegments() ? source.virtualMemory() : null;
        this.free = new FreeLists(vm != null);
    }

    public CachingAllocator(SegmentSource source) {
        this(source, StreamSync.SYNCHRONOUS, AllocatorConfig.defaults());
    }

    public AllocatorConfig config() {
        return config;
    }

    public SegmentSource source() {
        return source;
    }

    /** Whether this allocator grows one address range per stream and pool instead of adding segments. */
    public boolean expandable() {
        return vm != null;
    }

    /** Allocates at least {@code bytes} for use on {@code stream}: {@link #allocate(long, long, boolean)}, not long-lived. */
    public Allocation allocate(long bytes, long stream) {
        return allocate(bytes, stream, false);
    }

    /**
     * Allocates at least {@code bytes} for use on {@code stream}; a {@code longLived} block (held for a session: weights,
     * arena, workspace) is not rounded up to a size class ({@link AllocatorConfig#blockSize}). A {@link DeviceOutOfMemoryException}
     * when the source cannot supply it even after the cache is freed.
     */
    public synchronized Allocation allocate(long bytes, long stream, boolean longLived) {
        if (bytes < 0) {
            throw new IllegalArgumentException("cannot allocate a negative size: " + bytes);
        }
        pending.drain(false, this::release);
        if (vm != null) {
            trimTails();
        }
        long size = config.blockSize(bytes, longLived);
        boolean small = config.isSmall(size);
        int pool = config.poolOf(size, vm != null);
        Block block = free.bestFit(stream, size, pool, config, sync);
        if (block == null) {
            block = grow(stream, size, pool);
        }
        if (block == null) {
            // Free the cache and retry: pending blocks may coalesce into a fit, and whole free
            // segments of every stream go back to the source to make room for a new one.
            retries++;
            releaseCached();
            block = free.bestFit(stream, size, pool, config, sync);
            if (block == null) {
                block = grow(stream, size, pool);
            }
            if (block == null) {
                ooms++;
                throw new DeviceOutOfMemoryException(source.name(), bytes, reserved, allocated, free.largest());
            }
        }
        free.remove(block);
        // In an expandable range any remainder is kept: it is contiguous with its neighbours.
        if (config.shouldSplit(block.size, size, small || block.segment.expandable())) {
            Block rest = new Block(block.segment, block.address + size, block.size - size);
            rest.uses = block.uses == null ? null : new TreeMap<>(block.uses);
            rest.prev = block;
            rest.next = block.next;
            if (block.next != null) {
                block.next.prev = rest;
            } else {
                block.segment.tail = rest;
            }
            block.next = rest;
            block.size = size;
            free.add(rest);
        }
        block.state = Block.State.ALLOCATED;
        block.uses = null; // every outstanding use was checked complete, or is on this stream
        block.stream = stream;
        block.allocationId = nextId++;
        block.requested = bytes;
        live.put(block.address, block);
        allocated += block.size;
        requested += bytes;
        return new Allocation(block.address, block.size, bytes, stream, block.allocationId);
    }

    /** Frees an allocation used only on the stream it was allocated on. */
    public void free(Allocation allocation) {
        free(allocation, Set.of());
    }

    /**
     * Frees an allocation that kernels on {@code usedOnStreams} may still touch. The block is
     * reusable on its own stream only after a marker recorded now on each of those other
     * streams completes (the allocation's own stream is ordered, so it needs none).
     *
     * @throws IllegalStateException on a double free or a handle from another allocator
     */
    public synchronized void free(Allocation allocation, Set<Long> usedOnStreams) {
        Block block = live.get(allocation.address());
        if (block == null || block.allocationId != allocation.id()) {
            throw new IllegalStateException("double free or unknown allocation: " + allocation);
        }
        live.remove(block.address);
        allocated -= block.size;
        requested -= block.requested;
        TreeSet<Long> others = new TreeSet<>(usedOnStreams); // sorted: markers recorded in a fixed order
        if (vm != null) {
            // Shared range: free at once, remembering a marker per stream that used it; the
            // allocating stream may take it back right away, any other once the markers complete.
            others.add(block.stream);
            block.uses = new TreeMap<>();
            for (long s : others) {
                block.uses.put(s, new Block.Use(useSeq++, sync.record(s)));
            }
            release(block);
            return;
        }
        others.remove(block.segment.stream());
        if (others.isEmpty()) {
            release(block);
            return;
        }
        List<StreamSync.Marker> markers = new ArrayList<>(others.size());
        for (long s : others) {
            markers.add(sync.record(s));
        }
        pending.add(block, markers);
    }

    /**
     * Gives every cached segment that holds no live or pending block back to the source, after
     * waiting for all pending markers. Live allocations are untouched.
     */
    public synchronized void emptyCache() {
        releaseCached();
    }

    public synchronized AllocatorStats stats() {
        return new AllocatorStats(reserved, allocated, requested, free.bytes(), pending.bytes(), free.largest(),
                live.size(), segments.size(), retries, ooms);
    }

    /** Every segment with its blocks, in address order: for debugging and for tests of placement. */
    public synchronized List<SegmentInfo> snapshot() {
        List<SegmentInfo> out = new ArrayList<>(heads.size());
        for (Block head : heads.values()) {
            List<SegmentInfo.BlockInfo> blocks = new ArrayList<>();
            for (Block b = head; b != null; b = b.next) {
                blocks.add(new SegmentInfo.BlockInfo(b.address, b.size, SegmentInfo.State.valueOf(b.state.name())));
            }
            Segment s = head.segment;
            out.add(new SegmentInfo(s.address(), s.size(), s.stream(), s.small(), blocks));
        }
        return out;
    }

    private void releaseCached() {
        pending.drain(true, this::release);
        if (vm != null) {
            free.forEach(BlockUses::awaitUses);
        }
        for (Block head : new ArrayList<>(heads.values())) {
            Segment s = head.segment;
            if (s.expandable()) {
                shrinkRange(s);
            } else if (head.state == Block.State.FREE && head.isWholeSegment()) {
                free.remove(head);
                forget(s);
                reserved -= s.size();
                source.release(s.address(), s.size());
            }
        }
    }

    private void forget(Segment s) {
        segments.remove(s.address());
        heads.remove(s.address());
    }

    /**
     * Gives back the free tail of the small and mid ranges beyond a slack, once no stream can
     * still touch it. Their free bytes are cached for requests that are cheap to serve anyway,
     * and scattered beside the large range's free space they are what alloc_frag_pct counts.
     * The large range keeps its tail: it is the space each step's activations are carved from.
     * Slack: one small segment (2 MiB) for the small range, one mid segment (20 MiB) for the
     * mid range, the sizes PyTorch reserves for them, so that steady traffic does not map and
     * unmap on every call.
     */
    private void trimTails() {
        for (int p = Segment.SMALL; p <= Segment.MID; p++) {
            Segment r = ranges[p];
            if (r == null) {
                continue;
            }
            Block t = r.tail;
            long slack = p == Segment.SMALL ? config.smallBuffer() : config.largeBuffer();
            if (t.state != Block.State.FREE || t.size <= slack + vm.pageSize() || !BlockUses.usableBy(t, Long.MIN_VALUE)) {
                continue;
            }
            long keepEnd = r.address() + AllocatorConfig.ceilTo(t.address + slack - r.address(), vm.pageSize());
            long cut = r.address() + r.size - keepEnd;
            if (cut > 0) {
                free.remove(t);
                vm.unmap(keepEnd, cut);
                reserved -= cut;
                r.size -= cut;
                t.size -= cut;
                free.add(t);
            }
        }
    }

    /** Unmaps the whole pages of a range's free tail; a range left with nothing mapped gives its addresses back. */
    private void shrinkRange(Segment r) {
        Block t = r.tail;
        if (t.state != Block.State.FREE) {
            return;
        }
        long keepEnd = r.address() + AllocatorConfig.ceilTo(t.address - r.address(), vm.pageSize());
        long cut = r.address() + r.size - keepEnd;
        if (cut <= 0) {
            return;
        }
        free.remove(t);
        BlockUses.awaitUses(t); // no queued kernel may still touch pages we unmap
        vm.unmap(keepEnd, cut);
        reserved -= cut;
        r.size -= cut;
        t.size -= cut;
        if (r.size == 0) {
            forget(r);
            ranges[r.pool()] = null;
            vm.releaseRange(r.address(), r.rangeSize);
        } else if (t.size == 0) {
            t.unlink(); // the tail began on a page boundary: it is gone, its predecessor is the tail
        } else {
            free.add(t);
        }
    }

    /** Adds memory for a request no cached block fits: a new segment, or more of the stream's range. */
    private Block grow(long stream, long size, int pool) {
        return vm != null ? growRange(stream, size, pool) : newSegment(stream, size, pool == Segment.SMALL);
    }

    /**
     * Maps enough pages at the end of the pool's shared range for {@code size}, counting a free
     * tail block that {@code stream} may use, which the new pages extend. Returns the free block
     * that now fits, or null when the device (or the range) is full.
     */
    private Block growRange(long stream, long size, int pool) {
        Segment r = ranges[pool];
        boolean fresh = r == null;
        if (fresh) {
            long va = vm.reserveRange(vm.rangeSize());
            if (va < 0) {
                return null;
            }
            r = new Segment(va, 0, SHARED, pool, vm.rangeSize());
        }
        Block tail = r.tail;
        long have = tail != null && tail.state == Block.State.FREE && BlockUses.usableBy(tail, stream) ? tail.size : 0;
        long more = AllocatorConfig.ceilTo(size - have, vm.pageSize());
        if (r.size + more > r.rangeSize || !vm.map(r.address() + r.size, more)) {
            if (fresh) {
                vm.releaseRange(r.address(), r.rangeSize);
            }
            return null;
        }
        reserved += more;
        if (fresh) {
            ranges[pool] = r;
            segments.put(r.address(), r);
        }
        if (have > 0) {
            free.remove(tail);
            tail.size += more;
            r.size += more;
            free.add(tail);
            return tail;
        }
        Block b = new Block(r, r.address() + r.size, more);
        r.size += more;
        b.prev = tail;
        if (tail != null) {
            tail.next = b;
        } else {
            heads.put(r.address(), b);
        }
        r.tail = b;
        free.add(b);
        return b;
    }

    /** Reserves a segment for a request of {@code size}; null when the source is full. */
    private Block newSegment(long stream, long size, boolean small) {
        long bytes = config.segmentSize(size);
        long address = source.reserve(bytes);
        if (address < 0) {
            return null;
        }
        if (segments.containsKey(address)) {
            throw new IllegalStateException(source.name() + " returned address 0x" + Long.toHexString(address)
                    + " which is already reserved");
        }
        Segment s = new Segment(address, bytes, stream, small ? Segment.SMALL : Segment.LARGE, 0);
        segments.put(address, s);
        reserved += bytes;
        Block b = new Block(s, address, bytes);
        s.tail = b;
        heads.put(address, b);
        free.add(b);
        return b;
    }

    /** Returns a block to its free list, merged with free neighbours. */
    private void release(Block block) {
        block.state = Block.State.FREE;
        block.allocationId = 0;
        block.requested = 0;
        Block b = block;
        if (b.prev != null && b.prev.state == Block.State.FREE) {
            Block p = b.prev;
            free.remove(p);
            p.uses = BlockUses.mergeUses(p.uses, b.uses);
            p.size += b.size;
            b.unlink();
            b = p;
        }
        if (b.next != null && b.next.state == Block.State.FREE) {
            Block n = b.next;
            free.remove(n);
            b.uses = BlockUses.mergeUses(b.uses, n.uses);
            b.size += n.size;
            n.unlink();
        }
        free.add(b);
    }
}
