package dev.lantern.runtime.alloc;

/**
 * Supplies the segment source of one kind of device to tools that are device-agnostic, such as
 * the soak. Found through {@link java.util.ServiceLoader}: a device module lists its
 * implementation in {@code META-INF/services/dev.lantern.runtime.alloc.SegmentSourceProvider}.
 */
public interface SegmentSourceProvider {
    /** The device kind it serves, as typed on the command line: "cuda". */
    String device();

    /**
     * Opens the device and returns its source. A source that is also {@link AutoCloseable} is
     * closed by the caller when done.
     *
     * @throws RuntimeException with a one-line message when no such device is usable
     */
    SegmentSource open();

    /**
     * Stream markers matching the source, or null to let the caller simulate them (the soak
     * launches no kernels, so simulated markers are exact there).
     */
    default StreamSync streamSync() {
        return null;
    }
}
