package dev.lantern.runtime;

import java.lang.foreign.MemorySegment;

/**
 * A block of memory owned by a device: host memory for the CPU, device memory for CUDA.
 * {@link #address()} is the raw address (a CUdeviceptr on CUDA); {@link #hostSegment()} is
 * present only for host-visible memory.
 */
public interface TensorStorage extends AutoCloseable {
    Device device();

    long bytes();

    long address();

    /** The host view of this memory, or {@code null} when it is not host-visible. */
    MemorySegment hostSegment();

    @Override
    void close();
}
