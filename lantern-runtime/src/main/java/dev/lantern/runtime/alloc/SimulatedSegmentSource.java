package dev.lantern.runtime.alloc;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A fake device memory for tests and the soak: a capacity limit, deterministic addresses
 * (first fit in a fake address space, so released ranges are reused as cuMemAlloc reuses
 * them), and a record of every reservation and release so that leaks and double frees show.
 *
 * <p>It also offers {@link VirtualMemory}: address ranges (from a second fake address space)
 * whose mapped part is a prefix that grows and shrinks at its end, which is all the allocator's
 * expandable segments do; any other map or unmap is rejected as a bug. Mapped bytes count
 * against the same capacity as segments.
 *
 * <p>A release of an address that is not reserved, or with the wrong size, throws
 * {@link IllegalStateException} and is counted in {@link #badReleases()}.
 */
public final class SimulatedSegmentSource implements SegmentSource {
    /** Where fake addresses start: high enough to look like a device pointer, never 0. */
    public static final long BASE = 0x7f00_0000_0000L;
    /** Where expandable ranges start, far from the segments. */
    public static final long RANGE_BASE = 0x5000_0000_0000L;
    private static final int LOG_LIMIT = 1 << 20;

    public enum Op { RESERVE, RELEASE, REFUSED, RANGE_RESERVE, RANGE_RELEASE, MAP, UNMAP }

    /** One call, in order. A refused reservation has address -1. */
    public record Event(Op op, long address, long bytes) {
    }

    private final String name;
    private final long capacity;
    private final long granularity;
    private final TreeMap<Long, Long> live = new TreeMap<>(); // address -> bytes asked for
    private final TreeMap<Long, Long> holes = new TreeMap<>(); // address -> length, below the top
    private long top = BASE;
    private final TreeMap<Long, long[]> ranges = new TreeMap<>(); // base -> {size, mapped prefix}
    private long rangeTop = RANGE_BASE;
    private final VirtualMemory vm = new Vmm();
    private long liveBytes, peakBytes, reserves, releases, refusals, badReleases;
    private final List<Event> log = new ArrayList<>();
    private long logDropped;

    /**
     * @param capacity    bytes that may be reserved at once
     * @param granularity address alignment and rounding of each range (2 MiB, as cuMemAlloc's large pages)
     */
    public SimulatedSegmentSource(String name, long capacity, long granularity) {
        if (capacity <= 0 || granularity <= 0 || Long.bitCount(granularity) != 1) {
            throw new IllegalArgumentException("capacity must be positive and granularity a power of two: "
                    + capacity + ", " + granularity);
        }
        this.name = name;
        this.capacity = capacity;
        this.granularity = granularity;
    }

    public SimulatedSegmentSource(long capacity) {
        this("sim", capacity, 2 * AllocatorConfig.MiB);
    }

    @Override
    public synchronized long reserve(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("reserve of " + bytes + " bytes");
        }
        if (liveBytes + bytes > capacity) {
            refusals++;
            log(Op.REFUSED, -1, bytes);
            return -1;
        }
        long span = AllocatorConfig.ceilTo(bytes, granularity);
        long address = -1;
        for (Map.Entry<Long, Long> h : holes.entrySet()) { // first fit, lowest address first
            if (h.getValue() >= span) {
                address = h.getKey();
                holes.remove(address);
                if (h.getValue() > span) {
                    holes.put(address + span, h.getValue() - span);
                }
                break;
            }
        }
        if (address < 0) {
            address = top;
            top += span;
        }
        live.put(address, bytes);
        liveBytes += bytes;
        peakBytes = Math.max(peakBytes, liveBytes);
        reserves++;
        log(Op.RESERVE, address, bytes);
        return address;
    }

    @Override
    public synchronized void release(long address, long bytes) {
        Long had = live.get(address);
        if (had == null || had != bytes) {
            badReleases++;
            throw new IllegalStateException(name + ": release of 0x" + Long.toHexString(address) + " (" + bytes
                    + " bytes) " + (had == null ? "which is not reserved (double free?)" : "reserved as " + had + " bytes"));
        }
        live.remove(address);
        liveBytes -= bytes;
        releases++;
        log(Op.RELEASE, address, bytes);
        addHole(address, AllocatorConfig.ceilTo(bytes, granularity));
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public VirtualMemory virtualMemory() {
        return vm;
    }

    private final class Vmm implements VirtualMemory {
        @Override
        public long pageSize() {
            return granularity;
        }

        @Override
        public long rangeSize() {
            return AllocatorConfig.ceilTo(capacity, granularity);
        }

        @Override
        public long reserveRange(long bytes) {
            synchronized (SimulatedSegmentSource.this) {
                // Ranges are never reused at a new size, so a released one is simply forgotten:
                // addresses stay deterministic, and 2^44 bytes of fake space is plenty.
                long base = rangeTop;
                rangeTop += AllocatorConfig.ceilTo(bytes, granularity);
                ranges.put(base, new long[] {bytes, 0});
                log(Op.RANGE_RESERVE, base, bytes);
                return base;
            }
        }

        @Override
        public boolean map(long address, long bytes) {
            synchronized (SimulatedSegmentSource.this) {
                long[] r = rangeAt(address, bytes);
                if (address != rangeBase(address) + r[1] || bytes % granularity != 0) {
                    throw bad("map", address, bytes, "not page-aligned growth at the end of the mapped prefix");
                }
                if (liveBytes + bytes > capacity) {
                    refusals++;
                    log(Op.REFUSED, address, bytes);
                    return false;
                }
                r[1] += bytes;
                liveBytes += bytes;
                peakBytes = Math.max(peakBytes, liveBytes);
                reserves++;
                log(Op.MAP, address, bytes);
                return true;
            }
        }

        @Override
        public void unmap(long address, long bytes) {
            synchronized (SimulatedSegmentSource.this) {
                long[] r = rangeAt(address, bytes);
                if (address + bytes != rangeBase(address) + r[1] || bytes % granularity != 0 || bytes > r[1]) {
                    throw bad("unmap", address, bytes, "not the page-aligned end of the mapped prefix");
                }
                r[1] -= bytes;
                liveBytes -= bytes;
                releases++;
                log(Op.UNMAP, address, bytes);
            }
        }

        @Override
        public void releaseRange(long address, long bytes) {
            synchronized (SimulatedSegmentSource.this) {
                long[] r = ranges.get(address);
                if (r == null || r[0] != bytes || r[1] != 0) {
                    throw bad("range release", address, bytes, r == null ? "not a reserved range"
                            : r[1] != 0 ? r[1] + " bytes still mapped" : "reserved as " + r[0] + " bytes");
                }
                ranges.remove(address);
                log(Op.RANGE_RELEASE, address, bytes);
            }
        }

        private long rangeBase(long address) {
            Map.Entry<Long, long[]> e = ranges.floorEntry(address);
            return e == null ? -1 : e.getKey();
        }

        private long[] rangeAt(long address, long bytes) {
            Map.Entry<Long, long[]> e = ranges.floorEntry(address);
            if (e == null || address + bytes > e.getKey() + e.getValue()[0]) {
                throw bad("map/unmap", address, bytes, "outside every reserved range");
            }
            return e.getValue();
        }

        private IllegalStateException bad(String what, long address, long bytes, String why) {
            badReleases++;
            return new IllegalStateException(name + ": " + what + " of 0x" + Long.toHexString(address) + " ("
                    + bytes + " bytes): " + why);
        }
    }

    private void addHole(long address, long span) {
        Map.Entry<Long, Long> below = holes.floorEntry(address);
        if (below != null && below.getKey() + below.getValue() == address) {
            holes.remove(below.getKey());
            address = below.getKey();
            span += below.getValue();
        }
        Long aboveLen = holes.remove(address + span);
        if (aboveLen != null) {
            span += aboveLen;
        }
        if (address + span == top) {
            top = address; // the hole touches the top: shrink instead of keeping it
        } else {
            holes.put(address, span);
        }
    }

    private void log(Op op, long address, long bytes) {
        if (log.size() < LOG_LIMIT) {
            log.add(new Event(op, address, bytes));
        } else {
            logDropped++;
        }
    }

    public long capacity() {
        return capacity;
    }

    /** Bytes reserved or mapped and not released: after the allocator's emptyCache with nothing live, a leak if not 0. */
    public synchronized long liveBytes() {
        return liveBytes;
    }

    public synchronized int liveSegments() {
        return live.size();
    }

    /** Expandable ranges reserved and not released. */
    public synchronized int liveRanges() {
        return ranges.size();
    }

    public synchronized long peakBytes() {
        return peakBytes;
    }

    public synchronized long reserves() {
        return reserves;
    }

    public synchronized long releases() {
        return releases;
    }

    public synchronized long refusals() {
        return refusals;
    }

    public synchronized long badReleases() {
        return badReleases;
    }

    /** The first 2^20 calls, in order (later ones are counted in {@link #logDropped()}). */
    public synchronized List<Event> log() {
        return List.copyOf(log);
    }

    public synchronized long logDropped() {
        return logDropped;
    }
}
