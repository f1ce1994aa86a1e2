package dev.lantern.cuda.driver;

import dev.lantern.cuda.ffi.ContextHealth;
import dev.lantern.cuda.ffi.CudaOutOfMemoryException;
import dev.lantern.runtime.alloc.SegmentSource;
import dev.lantern.runtime.alloc.VirtualMemory;

/**
 * Segments for the caching allocator, straight from cuMemAlloc_v2/cuMemFree_v2, plus the
 * device's VMM ({@link CudaVirtualMemory}) for expandable segments when it has one. Out of
 * memory is the normal "-1" answer of the contract (the allocator frees its cache and
 * retries); every other CUDA failure still throws. A source that owns its device (from
 * {@code CudaSegmentSourceProvider}) closes it on {@link #close()}. The segments belong to the
 * context generation the source was made in: once that is lost or reset, reserving refuses
 * ({@link dev.lantern.cuda.ffi.CudaContextLostException}) and releasing frees nothing.
 */
public final class CudaSegmentSource implements SegmentSource, AutoCloseable {
    private final CudaDevice device;
    private final boolean ownsDevice;
    private final ContextHealth generation;
    private VirtualMemory vm;
    private boolean vmChecked;

    public CudaSegmentSource(CudaDevice device) {
        this(device, false);
    }

    public CudaSegmentSource(CudaDevice device, boolean ownsDevice) {
        this.device = device;
        this.ownsDevice = ownsDevice;
        this.generation = device.generation();
    }

    public CudaDevice device() {
        return device;
    }

    @Override
    public long reserve(long bytes) {
        device.makeCurrent(generation);
        try {
            return device.driver().memory().memAlloc(bytes);
        } catch (CudaOutOfMemoryException e) {
            return -1;
        }
    }

    @Override
    public void release(long address, long bytes) {
        device.release(generation, () -> device.driver().memory().memFree(address));
    }

    @Override
    public String name() {
        return device.name();
    }

    /** The device's VMM, or null when unsupported (the allocator then uses whole segments). */
    @Override
    public synchronized VirtualMemory virtualMemory() {
        if (!vmChecked) {
            vm = CudaVirtualMemory.of(device, generation);
            vmChecked = true;
        }
        return vm;
    }

    @Override
    public void close() {
        if (ownsDevice) {
            device.close();
        }
    }
}
