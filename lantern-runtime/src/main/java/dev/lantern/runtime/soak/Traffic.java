package dev.lantern.runtime.soak;

import dev.lantern.runtime.alloc.Allocation;
import dev.lantern.runtime.alloc.CachingAllocator;
import dev.lantern.runtime.alloc.DeviceOutOfMemoryException;
import dev.lantern.runtime.alloc.SimulatedStreamSync;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * What the soak's agents share: the allocator, the seeded random source, the simulated stream
 * clocks and the placement digest. Every allocation and free goes through here, so each is
 * counted once and hashed as (op, address, size).
 */
final class Traffic {
    /** Share of frees whose block another stream also used (it then waits for a marker). */
    private static final double CROSS_STREAM_FREE = 0.10;
    private static final byte ALLOC = 1, FREE = 2, FREE_CROSS = 3, OOM = 4;

    final CachingAllocator allocator;
    final SplittableRandom rng;
    private final SimulatedStreamSync simSync; // null when the markers are real
    private final int streams;
    private final MessageDigest digest;
    private final ByteBuffer record = ByteBuffer.allocate(17);
    private long ops;
    private long ooms;

    Traffic(CachingAllocator allocator, SplittableRandom rng, SimulatedStreamSync simSync, int streams) {
        this.allocator = allocator;
        this.rng = rng;
        this.simSync = simSync;
        this.streams = streams;
        try {
            this.digest = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }

    /** Allocates on {@code stream}; null after an OOM (the caller then drops its state). */
    Allocation alloc(long bytes, long stream) {
        tick(stream);
        try {
            Allocation a = allocator.allocate(bytes, stream);
            hash(ALLOC, a.address(), a.size());
            return a;
        } catch (DeviceOutOfMemoryException e) {
            ooms++;
            hash(OOM, -1, bytes);
            return null;
        }
    }

    /** Frees; one time in ten the block is marked as used by another stream too. */
    void free(Allocation a) {
        if (a == null) {
            return;
        }
        tick(a.stream());
        if (streams > 1 && rng.nextDouble() < CROSS_STREAM_FREE) {
            long other = (a.stream() + 1 + rng.nextInt(streams - 1)) % streams;
            allocator.free(a, Set.of(other));
            hash(FREE_CROSS, a.address(), a.size());
        } else {
            allocator.free(a);
            hash(FREE, a.address(), a.size());
        }
    }

    /** Frees one of {@code held} picked at random and drops it from the list (swap with the last: order is not kept). */
    void freeRandom(List<Allocation> held) {
        int i = rng.nextInt(held.size());
        Allocation a = held.get(i);
        held.set(i, held.getLast());
        held.removeLast();
        free(a);
    }

    /** Frees at the end of the run: no random draw, so the digest does not depend on what was left. */
    void freeQuietly(Allocation a) {
        if (a != null) {
            allocator.free(a);
        }
    }

    /** One operation of logical time: simulated markers complete a fixed number of operations after they are recorded. */
    private void tick(long stream) {
        ops++;
        if (simSync != null) {
            simSync.tick(1);
        }
    }

    private void hash(byte op, long address, long size) {
        record.clear();
        record.put(op).putLong(address).putLong(size);
        digest.update(record.array());
    }

    long ops() {
        return ops;
    }

    long ooms() {
        return ooms;
    }

    String digestHex() {
        return HexFormat.of().formatHex(digest.digest());
    }
}
