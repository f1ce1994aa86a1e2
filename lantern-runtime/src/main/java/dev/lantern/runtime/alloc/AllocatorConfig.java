package dev.lantern.runtime.alloc;

/**
 * The size classes and splitting rules of {@link CachingAllocator}, as an immutable value.
 * The defaults follow PyTorch's CUDACachingAllocator; docs/adr/0004-caching-allocator.md gives
 * the reasons for each number.
 *
 * <pre>
 * request r (bytes)          rounded size s                 segment reserved for a miss
 * r &lt;= 1 MiB   (small pool) 512 * ceil(r / 512)            2 MiB
 * 1 MiB &lt; r &lt; 10 MiB       512 * ceil(r / 512)            20 MiB
 * r &gt;= 10 MiB               512 * ceil(r / 512), or the    2 MiB * ceil(s / 2 MiB)
 *                            power-of-two division above r
 *                            when r &gt;= roundPow2Above
 * </pre>
 *
 * <p>The segment column applies to fixed segments. With expandable segments the three size
 * bands are three address ranges (small, mid, large) that grow by 2 MiB pages instead.
 *
 * @param minBlockSize     allocation granularity: every size is a multiple of it (512 B)
 * @param smallSize        largest request served by the small pool (1 MiB)
 * @param smallBuffer      segment size of the small pool (2 MiB)
 * @param minLargeAlloc    requests below this share a {@code largeBuffer} segment (10 MiB)
 * @param largeBuffer      segment size for mid-sized requests (20 MiB)
 * @param roundLarge       large segments are a multiple of this (2 MiB)
 * @param maxSplitSize     blocks of at least this size are never split, and requests below it
 *                         never take such a block ({@code Long.MAX_VALUE}: no limit)
 * @param pow2Divisions    large requests at or above {@code roundPow2Above} are rounded up to
 *                         one of this many equal steps between two powers of two (0: off)
 * @param roundPow2Above   the smallest request that {@code pow2Divisions} applies to
 * @param expandableSegments use one growable address range per stream and pool when the source
 *                         offers {@link VirtualMemory} (PyTorch's {@code expandable_segments})
 */
public record AllocatorConfig(
        long minBlockSize,
        long smallSize,
        long smallBuffer,
        long minLargeAlloc,
        long largeBuffer,
        long roundLarge,
        long maxSplitSize,
        int pow2Divisions,
        long roundPow2Above,
        boolean expandableSegments) {

    public static final long KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

    public AllocatorConfig {
        if (minBlockSize <= 0 || Long.bitCount(minBlockSize) != 1) {
            throw new IllegalArgumentException("minBlockSize must be a power of two, got " + minBlockSize);
        }
        if (smallSize < minBlockSize || smallBuffer < smallSize || largeBuffer < minLargeAlloc
                || roundLarge % minBlockSize != 0 || smallBuffer % minBlockSize != 0
                || largeBuffer % roundLarge != 0) {
            throw new IllegalArgumentException("inconsistent allocator size classes: " + "small "
                    + smallSize + "/" + smallBuffer + ", large " + minLargeAlloc + "/" + largeBuffer
                    + ", round " + roundLarge + ", granularity " + minBlockSize);
        }
        if (maxSplitSize <= smallSize) {
            throw new IllegalArgumentException("maxSplitSize must exceed smallSize, got " + maxSplitSize);
        }
        if (pow2Divisions < 0 || (pow2Divisions > 0 && Integer.bitCount(pow2Divisions) != 1)) {
            throw new IllegalArgumentException("pow2Divisions must be 0 or a power of two, got " + pow2Divisions);
        }
    }

    /**
     * The rules Lantern uses: PyTorch's size classes plus two of its opt-in settings turned on,
     * {@code max_split_size_mb:256} and {@code roundup_power2_divisions:4} above 32 MiB, because
     * transformer traffic with varying sequence lengths fragments without them (see the ADR).
     */
    public static AllocatorConfig defaults() {
        return new AllocatorConfig(512, MiB, 2 * MiB, 10 * MiB, 20 * MiB, 2 * MiB, 256 * MiB, 4, 32 * MiB, true);
    }

    /** PyTorch's CUDACachingAllocator with no options set: no split limit, no power-of-two rounding. */
    public static AllocatorConfig pytorchDefaults() {
        return new AllocatorConfig(512, MiB, 2 * MiB, 10 * MiB, 20 * MiB, 2 * MiB, Long.MAX_VALUE, 0, 0, false);
    }

    public AllocatorConfig withMaxSplitSize(long bytes) {
        return new AllocatorConfig(minBlockSize, smallSize, smallBuffer, minLargeAlloc, largeBuffer,
                roundLarge, bytes, pow2Divisions, roundPow2Above, expandableSegments);
    }

    public AllocatorConfig withPow2Divisions(int divisions, long above) {
        return new AllocatorConfig(minBlockSize, smallSize, smallBuffer, minLargeAlloc, largeBuffer,
                roundLarge, maxSplitSize, divisions, above, expandableSegments);
    }

    public AllocatorConfig withExpandableSegments(boolean on) {
        return new AllocatorConfig(minBlockSize, smallSize, smallBuffer, minLargeAlloc, largeBuffer,
                roundLarge, maxSplitSize, pow2Divisions, roundPow2Above, on);
    }

    /** The block size a request of {@code bytes} occupies. */
    public long roundSize(long bytes) {
        if (bytes < minBlockSize) {
            return minBlockSize;
        }
        if (pow2Divisions > 0 && bytes >= roundPow2Above) {
            // Steps of 2^k / divisions between 2^k and 2^(k+1): a 40 MiB request with 4
            // divisions becomes 40 MiB, a 41 MiB one 48 MiB. Sizes that differ by a few tokens
            // then share a block size, so freed blocks fit the next step's requests exactly.
            long floorPow2 = Long.highestOneBit(bytes);
            long step = Math.max(minBlockSize, floorPow2 / pow2Divisions);
            return ceilTo(bytes, step);
        }
        return ceilTo(bytes, minBlockSize);
    }

    /**
     * The block a request occupies: {@link #roundSize}, or for a {@code longLived} one (never freed and
     * reused while its owner lives) a multiple of the granularity only. The power-of-two steps exist so
     * that a freed block fits later requests of nearby sizes; a block never reused would only waste its
     * rounding (a session's 1064 MiB arena would hold 1280 MiB).
     */
    public long blockSize(long bytes, boolean longLived) {
        return !longLived ? roundSize(bytes) : bytes < minBlockSize ? minBlockSize : ceilTo(bytes, minBlockSize);
    }

    /** Whether a rounded size is served from the small pool. */
    public boolean isSmall(long roundedSize) {
        return roundedSize <= smallSize;
    }

    /** How many bytes to reserve from the source when no cached block fits {@code roundedSize}. */
    public long segmentSize(long roundedSize) {
        if (roundedSize <= smallSize) {
            return smallBuffer;
        }
        if (roundedSize < minLargeAlloc) {
            return largeBuffer;
        }
        return ceilTo(roundedSize, roundLarge);
    }

    /** Whether taking {@code size} bytes out of a free block of {@code blockSize} leaves a remainder worth keeping. */
    public boolean shouldSplit(long blockSize, long size, boolean small) {
        long remaining = blockSize - size;
        if (small) {
            return remaining >= minBlockSize;
        }
        // Large pool: a remainder of 1 MiB or less would only ever serve small-pool sizes, which
        // live in their own segments, so it stays inside the block as internal slack.
        return size < maxSplitSize && remaining > smallSize;
    }

    /**
     * Whether a free block of {@code blockSize} may serve a request of {@code size}: requests
     * below {@code maxSplitSize} never take an oversize block (it would be split or wasted),
     * and an oversize block serves a large request only when it wastes less than one
     * {@code largeBuffer}.
     */
    public boolean mayServe(long blockSize, long size) {
        if (size < maxSplitSize && blockSize >= maxSplitSize) {
            return false;
        }
        return !(size >= maxSplitSize && blockSize >= size + largeBuffer);
    }

    static long ceilTo(long value, long multiple) {
        return Math.ceilDiv(value, multiple) * multiple;
    }

    /**
     * The pool of a rounded size. With fixed segments, mid sizes share 20 MiB segments of the
     * large pool (PyTorch); in expandable mode ({@code expandable}) they get their own range, which keeps the
     * long-lived mid-sized blocks (KV caches, small activations) from leaving holes among the
     * big ones.
     */
    public int poolOf(long size, boolean expandable) {
        if (isSmall(size)) {
            return Segment.SMALL;
        }
        return expandable && size < minLargeAlloc ? Segment.MID : Segment.LARGE;
    }
}
