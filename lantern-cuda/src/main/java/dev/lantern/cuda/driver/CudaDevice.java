package dev.lantern.cuda.driver;

import dev.lantern.cuda.ffi.ContextHealth;
import dev.lantern.cuda.ffi.CudaContextLostException;
import dev.lantern.cuda.ffi.CudaDeviceApi;
import dev.lantern.cuda.ffi.CudaDriver;
import dev.lantern.cuda.ffi.CudaLibraries;
import dev.lantern.cuda.ffi.CudaMemoryApi;
import dev.lantern.runtime.Device;
import dev.lantern.runtime.Event;
import dev.lantern.runtime.Stream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.function.IntFunction;

/**
 * One CUDA GPU, through its primary context (the context the CUDA runtime and PyTorch use,
 * so Lantern can share pointers with them). The context is made current lazily on each
 * calling thread: every operation goes through {@link #makeCurrent()}, which costs a
 * thread-local read when it is already current.
 *
 * <p>Open with {@link #open(int)}; close releases the default stream and the context
 * reference. Memory from {@link #allocate} is plain cuMemAlloc; the caching allocator sits
 * above this, over {@link CudaSegmentSource}.
 *
 * <p>A lost context is reported as such: after a call fails with a sticky code
 * ({@code CUDA_ERROR_ILLEGAL_ADDRESS}, {@code LAUNCH_FAILED}, ...) the device is lost, and that
 * call and every later one throw {@link CudaContextLostException} naming the first failing call
 * and the step named by {@link #step} then, without calling the driver again; closing streams,
 * events, modules and memory releases nothing and throws nothing. {@link #reopen()} resets the
 * context and starts a new generation; objects of the old one stay invalid. The state belongs to
 * the GPU's primary context, shared by every device object opened on that GPU
 * ({@link PrimaryContext}).
 */
public final class CudaDevice implements Device {
    private final CudaLibraries libs;
    private final CudaDriver driver;
    private final int device;
    private final PrimaryContext primary;
    private final DeviceInfo target;
    private final int leastPriority;
    private final int greatestPriority;
    private volatile CudaStream defaultStream;
    private volatile boolean closed;

    private CudaDevice(CudaLibraries libs, int ordinal) {
        this.libs = libs;
        this.driver = libs.driver();
        driver.init();
        this.device = driver.devices().deviceGet(ordinal);
        this.primary = PrimaryContext.of(driver, device, "cuda:" + ordinal);
        primary.retain();
        makeCurrent();
        this.target = new DeviceInfo(ordinal, driver.devices().deviceName(device),
                driver.devices().deviceAttribute(CudaDeviceApi.ATTR_COMPUTE_CAPABILITY_MAJOR, device),
                driver.devices().deviceAttribute(CudaDeviceApi.ATTR_COMPUTE_CAPABILITY_MINOR, device),
                driver.devices().deviceAttribute(CudaDeviceApi.ATTR_MULTIPROCESSOR_COUNT, device),
                driver.devices().deviceAttribute(CudaDeviceApi.ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device),
                driver.devices().deviceAttribute(CudaDeviceApi.ATTR_CLOCK_RATE, device),
                driver.devices().deviceAttribute(CudaDeviceApi.ATTR_L2_CACHE_SIZE, device),
                driver.devices().deviceTotalMem(device));
        int[] range = driver.devices().ctxGetStreamPriorityRange();
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
            return d.devices().deviceCount();
        } catch (RuntimeException e) {
            return 0;
        }
    }

    /**
     * Makes this device's context current on the calling thread (cheap when it already is);
     * throws {@link CudaContextLostException} when the context is lost.
     */
    public void makeCurrent() {
        makeCurrent(primary.current());
    }

    /**
     * Makes {@code generation}'s context current (objects pass the generation they were made in);
     * throws {@link CudaContextLostException}, without calling the driver, when it is lost or was
     * reset or closed since. Costs a volatile read and a thread-local read when nothing changes.
     */
    public void makeCurrent(ContextHealth generation) {
        generation.ensureUsable();
        if (ContextHealth.current() != generation) {
            driver.devices().ctxSetCurrent(generation.context());
            ContextHealth.setCurrent(generation);
        }
    }

    /** The context generation that objects made now belong to (a new one after {@link #reopen}). */
    public ContextHealth generation() {
        return primary.current();
    }

    /**
     * Runs {@code release} (a cuMemFree, cuStreamDestroy, ...) of a handle made in
     * {@code generation}, unless that context is lost, reset or closed: then the handle went with
     * it, and releasing it would fail (or, after a reset, free something new). A loss seen by the
     * release itself is recorded, not thrown: closing must not add failures to the one that
     * matters, and the next use of the device reports it.
     */
    public void release(ContextHealth generation, Runnable release) {
        if (generation.isUnusable()) {
            return;
        }
        try {
            makeCurrent(generation);
            release.run();
        } catch (CudaContextLostException e) {
            // recorded on the generation; the next use of the device throws it
        }
    }

    /** True when the context is lost (a sticky error was seen) and not yet reopened, or closed. */
    public boolean isLost() {
        return primary.current().isUnusable();
    }

    /** The first loss of the current context, or null while it is live. */
    public CudaContextLostException lost() {
        return primary.current().lost();
    }

    /**
     * Names the step about to be issued, for the report of a context loss. {@code label.toString()}
     * runs only if a loss is recorded, so a precomputed label costs one field write per step.
     */
    public void step(Object label) {
        primary.current().step(label);
    }

    /** As {@link #step(Object)}, with the name {@code names.apply(index)} (e.g. a session's step list). */
    public void step(IntFunction<String> names, int index) {
        primary.current().step(names, index);
    }

    /**
     * Resets the primary context (cuDevicePrimaryCtxReset) and starts a new generation, in this
     * process: after a loss, the way to run again. Everything made in the old context — streams
     * (the default one is made anew), events, modules, memory, graphs, cuBLASLt handles and plans,
     * sessions, allocators — is invalid: using it throws {@link CudaContextLostException}, closing
     * it releases nothing. Other device objects on the same GPU (they share the context) move to
     * the new generation too. May also be called on a live device: it drops all its state.
     */
    public synchronized void reopen() {
        if (closed) {
            throw new IllegalStateException(name() + " is closed");
        }
        primary.reset();
        makeCurrent();
        defaultStream = new CudaStream(this, false, leastPriority);
    }

    public CudaDriver driver() {
        return driver;
    }

    public CudaLibraries libraries() {
        return libs;
    }

    /** Resident threads an SM holds at most (2048 on sm_90): the denominator of occupancy. */
    public int maxThreadsPerSm() {
        return driver.devices().deviceAttribute(CudaDeviceApi.ATTR_MAX_THREADS_PER_MULTIPROCESSOR, device);
    }

    public DeviceInfo target() {
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
        return driver.memory().memGetInfo()[0];
    }

    @Override
    public CudaStream newStream(boolean highPriority) {
        return new CudaStream(this, highPriority, highPriority ? greatestPriority : leastPriority);
    }

    /** This device's low-priority stream of the current generation (made anew after {@link #reopen}). */
    @Override
    public CudaStream defaultStream() {
        CudaStream s = defaultStream;
        if (s.generation() != primary.current()) {
            synchronized (this) {
                // another device object on this GPU reopened it: the old stream went with the old context
                if (defaultStream.generation() != primary.current()) {
                    defaultStream = new CudaStream(this, false, leastPriority);
                }
                s = defaultStream;
            }
        }
        return s;
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
        ContextHealth gen = generation();
        makeCurrent(gen);
        return CudaStorage.device(this, gen, driver.memory().memAlloc(bytes), bytes);
    }

    /** Page-locked host memory (cuMemHostAlloc, portable): fast, truly asynchronous copies. */
    public CudaStorage allocatePinned(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("pinned allocation of " + bytes + " bytes");
        }
        ContextHealth gen = generation();
        makeCurrent(gen);
        long host = driver.memory().memHostAlloc(bytes, CudaMemoryApi.CU_MEMHOSTALLOC_PORTABLE);
        return CudaStorage.pinned(this, gen, host, bytes);
    }

    /** Loads a cubin image; {@code key} is the cache key it was built under. */
    public CudaModule loadModule(byte[] cubin, String key) {
        ContextHealth gen = generation();
        makeCurrent(gen);
        try (Arena a = Arena.ofConfined()) {
            // The image must stay valid only for the call: the driver copies it.
            MemorySegment image = a.allocateFrom(ValueLayout.JAVA_BYTE, cubin);
            return new CudaModule(this, gen, driver.modules().moduleLoadData(image), key);
        }
    }

    @Override
    public void synchronize() {
        makeCurrent();
        driver.devices().ctxSynchronize();
    }

    /** Releases the default stream and this object's context reference; quiet when the context is lost. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        defaultStream.close();
        primary.release();
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
