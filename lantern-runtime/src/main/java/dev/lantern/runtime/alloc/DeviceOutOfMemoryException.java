package dev.lantern.runtime.alloc;

/**
 * Thrown when a request cannot be met even after the allocator has given every unused cached
 * segment back to its source and retried. Carries the figures a user needs to tell "the model
 * does not fit" (allocated near the limit) from "the cache is fragmented" (much reserved, little
 * allocated, largest free block below the request).
 */
public final class DeviceOutOfMemoryException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String device;
    private final long requested;
    private final long reserved;
    private final long allocated;
    private final long largestFree;

    public DeviceOutOfMemoryException(String device, long requested, long reserved, long allocated,
            long largestFree) {
        super(device + " out of memory: requested " + human(requested) + "; reserved " + human(reserved)
                + ", allocated " + human(allocated) + ", largest free block " + human(largestFree)
                + " (after freeing the cache and retrying)");
        this.device = device;
        this.requested = requested;
        this.reserved = reserved;
        this.allocated = allocated;
        this.largestFree = largestFree;
    }

    public String device() {
        return device;
    }

    public long requested() {
        return requested;
    }

    public long reserved() {
        return reserved;
    }

    public long allocated() {
        return allocated;
    }

    public long largestFree() {
        return largestFree;
    }

    /** "1610612736 bytes (1.50 GiB)": exact bytes first, so that logs can be compared. */
    static String human(long bytes) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        double v = bytes;
        int u = 0;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return bytes + " bytes (" + (u == 0 ? bytes + " B" : String.format(java.util.Locale.ROOT, "%.2f %s", v, units[u])) + ")";
    }
}
