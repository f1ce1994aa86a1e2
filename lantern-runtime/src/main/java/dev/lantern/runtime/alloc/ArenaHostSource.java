package dev.lantern.runtime.alloc;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.TreeMap;

/**
 * Host segments from one shared {@link Arena} each (so each can be freed alone), 64-byte
 * aligned. The CPU's stand-in for page-locked memory: on the CPU every host buffer is "pinned".
 */
public final class ArenaHostSource implements HostSegmentSource, AutoCloseable {
    private record Held(Arena arena, MemorySegment segment) {
    }

    private final long capacity;
    private final TreeMap<Long, Held> held = new TreeMap<>();
    private long liveBytes;

    /** @param capacity bytes that may be held at once; reservations past it are refused */
    public ArenaHostSource(long capacity) {
        this.capacity = capacity;
    }

    @Override
    public synchronized long reserve(long bytes) {
        if (liveBytes + bytes > capacity) {
            return -1;
        }
        Arena arena = Arena.ofShared();
        MemorySegment s;
        try {
            s = arena.allocate(bytes, 64);
        } catch (OutOfMemoryError e) {
            arena.close();
            return -1;
        }
        held.put(s.address(), new Held(arena, s));
        liveBytes += bytes;
        return s.address();
    }

    @Override
    public synchronized void release(long address, long bytes) {
        Held h = held.get(address);
        if (h == null || h.segment().byteSize() != bytes) {
            throw new IllegalStateException("host release of 0x" + Long.toHexString(address) + " (" + bytes
                    + " bytes) which this source did not reserve");
        }
        held.remove(address);
        liveBytes -= bytes;
        h.arena().close();
    }

    @Override
    public synchronized MemorySegment view(long address, long bytes) {
        Map.Entry<Long, Held> e = held.floorEntry(address);
        if (e == null || address - e.getKey() + bytes > e.getValue().segment().byteSize()) {
            throw new IllegalArgumentException("0x" + Long.toHexString(address) + " + " + bytes
                    + " is not inside a reserved host segment");
        }
        return e.getValue().segment().asSlice(address - e.getKey(), bytes);
    }

    @Override
    public String name() {
        return "host";
    }

    public synchronized long liveBytes() {
        return liveBytes;
    }

    /** Frees every segment still held. */
    @Override
    public synchronized void close() {
        held.values().forEach(h -> h.arena().close());
        held.clear();
        liveBytes = 0;
    }
}
