package dev.lantern.cuda.driver;

import dev.lantern.cuda.ffi.ContextHealth;
import dev.lantern.runtime.TensorStorage;
import java.lang.foreign.MemorySegment;

/**
 * CUDA memory: device memory (a CUdeviceptr) or page-locked host memory. Owned storage is
 * freed on close; a view (a block carved out by the caching allocator) runs its release
 * action instead. Close is idempotent, and frees nothing once the context it was allocated in is
 * lost or reset (the memory went with it).
 */
public final class CudaStorage implements TensorStorage {
    public enum Kind { DEVICE, PINNED_HOST }

    private final CudaDevice device;
    private final Kind kind;
    private final long address;
    private final long bytes;
    private final Runnable release;
    private boolean closed;

    private CudaStorage(CudaDevice device, Kind kind, long address, long bytes, Runnable release) {
        this.device = device;
        this.kind = kind;
        this.address = address;
        this.bytes = bytes;
        this.release = release;
    }

    static CudaStorage device(CudaDevice device, ContextHealth generation, long dptr, long bytes) {
        return new CudaStorage(device, Kind.DEVICE, dptr, bytes,
                () -> device.release(generation, () -> device.driver().memory().memFree(dptr)));
    }

    static CudaStorage pinned(CudaDevice device, ContextHealth generation, long hostPtr, long bytes) {
        return new CudaStorage(device, Kind.PINNED_HOST, hostPtr, bytes,
                () -> device.release(generation, () -> device.driver().memory().memFreeHost(hostPtr)));
    }

    /**
     * Device memory owned elsewhere (e.g. a block of the caching allocator); {@code release}
     * runs once on close and may be a no-op.
     */
    public static CudaStorage view(CudaDevice device, long dptr, long bytes, Runnable release) {
        return new CudaStorage(device, Kind.DEVICE, dptr, bytes, release);
    }

    public Kind kind() {
        return kind;
    }

    @Override
    public CudaDevice device() {
        return device;
    }

    @Override
    public long bytes() {
        return bytes;
    }

    @Override
    public long address() {
        return address;
    }

    /** The host view of pinned memory; null for device memory. */
    @Override
    public MemorySegment hostSegment() {
        return kind == Kind.PINNED_HOST ? MemorySegment.ofAddress(address).reinterpret(bytes) : null;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        release.run();
    }

    @Override
    public String toString() {
        return String.format("CudaStorage[%s %s 0x%x, %d bytes]", device.name(), kind, address, bytes);
    }
}
