package dev.lantern.cuda;

import dev.lantern.cuda.ffi.CudaOutOfMemoryException;
import dev.lantern.runtime.alloc.SegmentSource;

/**
 * Segments for the caching allocator, straight from cuMemAlloc_v2/cuMemFree_v2. Out of
 * memory is the normal "-1" answer of the contract (the allocator frees its cache and
 * retries); every other CUDA failure still throws.
 */
public final class CudaSegmentSource implements SegmentSource {
    private final CudaDevice device;

    public CudaSegmentSource(CudaDevice device) {
        this.device = device;
    }

    @Override
    public long reserve(long bytes) {
        device.makeCurrent();
        try {
            return device.driver().memAlloc(bytes);
        } catch (CudaOutOfMemoryException e) {
            return -1;
        }
    }

    @Override
    public void release(long address, long bytes) {
        device.makeCurrent();
        device.driver().memFree(address);
    }

    @Override
    public String name() {
        return device.name();
    }
}
