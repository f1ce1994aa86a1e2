package dev.lantern.cuda;

import dev.lantern.cuda.ffi.CudaDriver;
import dev.lantern.cuda.ffi.CudaLibraries;
import dev.lantern.runtime.Device;
import dev.lantern.runtime.Event;
import dev.lantern.runtime.Stream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * One CUDA GPU, through its primary context (the context the CUDA runtime and PyTorch use,
 * so Lantern can share pointers with them). The context is made current lazily on each
 * calling thread: every operation goes through {@link #makeCurrent()}, which costs a
 * thread-local read when it is already current.
 *
 * <p>Open with {@link #open(int)}; close releases the default stream and the context
 * reference. Memory from {@link #allocate} is plain cuMemAlloc; the caching allocator sits
 * above this, over {@link CudaSegmentSource}.
 */
public final class CudaDevice implements Device {
    private static final ThreadLocal<long[]> CURRENT = ThreadLocal.withInitial(() -> new long[] {0});

    private final CudaLibraries libs;
    private final CudaDriver driver;
    private final int device;
    private final long context;
    private final CudaTarget target;
    private final int leastPriority;
    private final int greatestPriority;
    private final CudaStream defaultStream;
    private volatile boolean closed;

    private CudaDevice(CudaLibraries libs, int ordinal) {
        this.libs = libs;
        this.driver = libs.driver();
        driver.init();
        this.device = driver.deviceGet(ordinal);
        this.context = driver.devicePrimaryCtxRetain(device);
        makeCurrent();
        this.target = new CudaTarget(ordinal, driver.deviceName(device),
                driver.deviceAttribute(CudaDriver.ATTR_COMPUTE_CAPABILITY_MAJOR, device),
                driver.deviceAttribute(CudaDriver.ATTR_COMPUTE_CAPABILITY_MINOR, device),
                driver.deviceAttribute(CudaDriver.ATTR_MULTIPROCESSOR_COUNT, device),
                driver.deviceAttribute(CudaDriver.ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device),
                driver.deviceAttribute(CudaDriver.ATTR_CLOCK_RATE, device),
                driver.deviceAttribute(CudaDriver.ATTR_L2_CACHE_SIZE, device),
                driver.deviceTotalMem(device));
        int[] range = driver.ctxGetStreamPriorityRange();
        this.leastPriority = range[0];
        this.greatestPriority = range[1];
        this.defaultStream = new CudaStream(this, false, leastPriority);
    }

    /** Opens GPU {@code ordinal} with the process's libraries (LANTERN_CUDA_LIBS etc.). */
    public static CudaDevice open(int ordinal) {
        return open(CudaLibraries.system(), ordinal);
    }

    public static CudaDevice open(CudaLibraries libs, int ordinal) {
        return new CudaDevice(libs, ordinal);
    }

    /** Number of GPUs, or 0 when there is no driver or no device (never throws). */
    public static int count() {
        try {
            CudaDriver d = CudaLibraries.system().driver();
            d.init();
            return d.deviceCount();
        } catch (RuntimeException e) {
            return 0;
        }
    }

    /** Makes this device's context current on the calling thread (cheap when it already is). */
    public void makeCurrent() {
        long[] current = CURRENT.get();
        if (current[0] != context) {
            driver.ctxSetCurrent(context);
            current[0] = context;
        }
    }

    public CudaDriver driver() {
        return driver;
    }

    public CudaLibraries libraries() {
        return libs;
    }

    public CudaTarget target() {
        return target;
    }

    /** {least, greatest} stream priority, e.g. {0, -5}. */
    public int[] priorityRange() {
        return new int[] {leastPriority, greatestPriority};
    }

    @Override
    public String name() {
        return "cuda:" + target.ordinal();
    }

    @Override
    public String description() {
        return target.describe();
    }

    @Override
    public long totalMemory() {
        return target.totalMemory();
    }

    /** Free bytes as the driver reports them (cuMemGetInfo_v2), for the whole device. */
    @Override
    public long freeMemory() {
        makeCurrent();
        return driver.memGetInfo()[0];
    }

    @Override
    public CudaStream newStream(boolean highPriority) {
        return new CudaStream(this, highPriority, highPriority ? greatestPriority : leastPriority);
    }

    @Override
    public CudaStream defaultStream() {
        return defaultStream;
    }

    @Override
    public CudaEvent newEvent(boolean timing) {
        return new CudaEvent(this, timing);
    }

    /** Plain cuMemAlloc; {@link dev.lantern.cuda.ffi.CudaOutOfMemoryException} when it does not fit. */
    @Override
    public CudaStorage allocate(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("allocation of " + bytes + " bytes on " + name());
        }
        makeCurrent();
        return CudaStorage.device(this, driver.memAlloc(bytes), bytes);
    }

    /** Page-locked host memory (cuMemHostAlloc, portable): fast, truly asynchronous copies. */
    public CudaStorage allocatePinned(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("pinned allocation of " + bytes + " bytes");
        }
        makeCurrent();
        return CudaStorage.pinned(this, driver.memHostAlloc(bytes, CudaDriver.CU_MEMHOSTALLOC_PORTABLE), bytes);
    }

    /** Loads a cubin image; {@code key} is the cache key it was built under. */
    public CudaModule loadModule(byte[] cubin, String key) {
        makeCurrent();
        try (Arena a = Arena.ofConfined()) {
            // The image must stay valid only for the call: the driver copies it.
            MemorySegment image = a.allocateFrom(ValueLayout.JAVA_BYTE, cubin);
            return new CudaModule(this, driver.moduleLoadData(image), key);
        }
    }

    @Override
    public void synchronize() {
        makeCurrent();
        driver.ctxSynchronize();
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        makeCurrent();
        defaultStream.close();
        driver.devicePrimaryCtxRelease(device);
        CURRENT.get()[0] = 0;
    }

    @Override
    public String toString() {
        return name() + " " + description();
    }

    // Narrowing helpers: the runtime interfaces pass Stream/Event; CUDA work needs CUDA handles.
    static CudaStream cuda(Stream s) {
        if (s instanceof CudaStream c) {
            return c;
        }
        throw new IllegalArgumentException("not a CUDA stream: " + s);
    }

    static CudaEvent cuda(Event e) {
        if (e instanceof CudaEvent c) {
            return c;
        }
        throw new IllegalArgumentException("not a CUDA event: " + e);
    }
}
