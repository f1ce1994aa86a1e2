package dev.lantern.cuda.driver;

import dev.lantern.cuda.ffi.ContextHealth;
import dev.lantern.cuda.ffi.CudaDriver;
import dev.lantern.cuda.ffi.CudaStreamApi;
import dev.lantern.runtime.Event;
import dev.lantern.runtime.Stream;
import dev.lantern.runtime.TensorStorage;
import java.lang.foreign.MemorySegment;

/**
 * A CUstream created non-blocking (it never synchronises with the legacy NULL stream, which
 * would also break stream capture), at the device's lowest or greatest priority.
 */
public final class CudaStream implements Stream {
    private final CudaDevice device;
    private final CudaDriver driver;
    private final ContextHealth generation;
    private final boolean highPriority;
    private final int priority;
    private final long handle;
    private final ReleaseOnce release;
    private volatile long synchronizations; // completed host synchronisations: see drainedSince

    CudaStream(CudaDevice device, boolean highPriority, int priority) {
        this.device = device;
        this.driver = device.driver();
        this.highPriority = highPriority;
        this.priority = priority;
        this.generation = device.generation();
        device.makeCurrent(generation);
        this.handle = driver.streams().streamCreateWithPriority(CudaStreamApi.CU_STREAM_NON_BLOCKING, priority);
        this.release = new ReleaseOnce(device, generation, () -> driver.streams().streamDestroy(handle));
    }

    /** The context generation this stream was created in; it refuses work once that is lost or reset. */
    public ContextHealth generation() {
        return generation;
    }

    /** The raw CUstream, for launches and library calls (cuBLASLt). */
    public long handle() {
        return handle;
    }

    /** The CUDA priority number: lower is more urgent (e.g. -5 high, 0 low). */
    public int priority() {
        return priority;
    }

    @Override
    public CudaDevice device() {
        return device;
    }

    @Override
    public boolean highPriority() {
        return highPriority;
    }

    @Override
    public void waitFor(Event event) {
        device.makeCurrent(generation);
        driver.streams().streamWaitEvent(handle, CudaDevice.cuda(event).handle());
    }

    @Override
    public void record(Event event) {
        device.makeCurrent(generation);
        driver.streams().eventRecord(CudaDevice.cuda(event).handle(), handle);
    }

    /**
     * Copies between any two of: this device's memory, page-locked host memory, and plain
     * native host memory (any storage with a native {@link TensorStorage#hostSegment()}).
     * Pageable host memory is staged by the driver, so such a copy may return only after the
     * host side has been read; pinned copies are fully asynchronous. Host-to-host copies wait
     * for this stream first, then copy on the calling thread, which keeps stream order.
     */
    @Override
    public void copy(TensorStorage src, long srcOffset, TensorStorage dst, long dstOffset, long bytes) {
        checkRange("source", src, srcOffset, bytes);
        checkRange("destination", dst, dstOffset, bytes);
        if (bytes == 0) {
            return;
        }
        device.makeCurrent(generation);
        boolean srcHost = isHost(src);
        boolean dstHost = isHost(dst);
        long s = hostOrDeviceAddress(src) + srcOffset;
        long d = hostOrDeviceAddress(dst) + dstOffset;
        if (srcHost && dstHost) {
            synchronize();
            MemorySegment.copy(src.hostSegment(), srcOffset, dst.hostSegment(), dstOffset, bytes);
        } else if (srcHost) {
            driver.memory().memcpyHtoDAsync(d, s, bytes, handle);
        } else if (dstHost) {
            driver.memory().memcpyDtoHAsync(d, s, bytes, handle);
        } else {
            driver.memory().memcpyDtoDAsync(d, s, bytes, handle);
        }
    }

    /** Fills {@code bytes} bytes of device memory with {@code value}, in stream order. */
    public void memset(TensorStorage dst, long offset, byte value, long bytes) {
        checkRange("destination", dst, offset, bytes);
        device.makeCurrent(generation);
        driver.memory().memsetD8Async(dst.address() + offset, value, bytes, handle);
    }

    /** Fills {@code count} 32-bit words (offset in bytes, 4-aligned), e.g. with a NaN pattern to poison outputs. */
    public void memset32(TensorStorage dst, long offset, int value, long count) {
        checkRange("destination", dst, offset, count * 4);
        if ((dst.address() + offset) % 4 != 0) {
            throw new IllegalArgumentException("memset32 needs a 4-byte aligned address");
        }
        device.makeCurrent(generation);
        driver.memory().memsetD32Async(dst.address() + offset, value, count, handle);
    }

    private static boolean isHost(TensorStorage s) {
        if (s instanceof CudaStorage c) {
            return c.kind() == CudaStorage.Kind.PINNED_HOST;
        }
        MemorySegment seg = s.hostSegment();
        if (seg == null) {
            throw new IllegalArgumentException("storage on " + s.device().name()
                    + " is neither CUDA memory nor host-visible: " + s);
        }
        return true;
    }

    private static long hostOrDeviceAddress(TensorStorage s) {
        if (s instanceof CudaStorage c) {
            return c.address();
        }
        MemorySegment seg = s.hostSegment();
        if (!seg.isNative()) {
            throw new IllegalArgumentException("host storage must be native (off-heap) memory to copy to a GPU");
        }
        return seg.address();
    }

    private static void checkRange(String what, TensorStorage s, long offset, long bytes) {
        if (offset < 0 || bytes < 0 || offset > s.bytes() - bytes) {
            throw new IndexOutOfBoundsException(what + " range [" + offset + ", " + (offset + bytes)
                    + ") outside a storage of " + s.bytes() + " bytes");
        }
    }

    @Override
    public void synchronize() {
        device.makeCurrent(generation);
        driver.streams().streamSynchronize(handle);
        synchronizations++;
    }

    /**
     * How many {@link #synchronize()} calls have returned: work queued before the count read
     * {@code n} has certainly finished once the count exceeds {@code n}. A host-side clock for
     * "everything queued until then is done" that costs no driver call ({@link StreamTailSync}).
     */
    public long synchronizations() {
        return synchronizations;
    }

    @Override
    public void close() {
        release.run();
    }

    @Override
    public String toString() {
        return "CudaStream[" + device.name() + ", priority " + priority + "]";
    }
}
