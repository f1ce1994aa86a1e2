package dev.lantern.cuda.ffi;

import static dev.lantern.cuda.ffi.CudaDriver.I_A;
import static dev.lantern.cuda.ffi.CudaDriver.I_AA;
import static dev.lantern.cuda.ffi.CudaDriver.I_AI;
import static dev.lantern.cuda.ffi.CudaDriver.I_I;
import static dev.lantern.cuda.ffi.CudaDriver.I_L;
import static dev.lantern.cuda.ffi.CudaDriver.I_V;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.lantern.cuda.ffi.NativeLibrary.Fn;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;

/**
 * Devices and their contexts in the driver API: count, handles, names, attributes and memory
 * size of the devices, their primary contexts (retain, release, reset), and the calling
 * thread's current context (set, synchronize, stream priorities). Part of {@link CudaDriver}
 * ({@code driver.devices()}); one method per C function, named after it.
 */
public final class CudaDeviceApi {
    // CUdevice_attribute values used by the runtime (cuda.h, CUDA 13.0).
    public static final int ATTR_MAX_THREADS_PER_BLOCK = 1;
    public static final int ATTR_CLOCK_RATE = 13;
    public static final int ATTR_MULTIPROCESSOR_COUNT = 16;
    public static final int ATTR_L2_CACHE_SIZE = 38;
    public static final int ATTR_MAX_THREADS_PER_MULTIPROCESSOR = 39;
    public static final int ATTR_COMPUTE_CAPABILITY_MAJOR = 75;
    public static final int ATTR_COMPUTE_CAPABILITY_MINOR = 76;
    public static final int ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;
    public static final int ATTR_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 102;

    private final CudaDriver driver;
    private final Fn cuDeviceGetCount;
    private final Fn cuDeviceGet;
    private final Fn cuDeviceGetName;
    private final Fn cuDeviceGetAttribute;
    private final Fn cuDeviceTotalMem;
    private final Fn cuDevicePrimaryCtxRetain;
    private final Fn cuDevicePrimaryCtxRelease;
    private final Fn cuDevicePrimaryCtxReset;
    private final Fn cuCtxSetCurrent;
    private final Fn cuCtxSynchronize;
    private final Fn cuCtxGetStreamPriorityRange;

    CudaDeviceApi(NativeLibrary lib, CudaDriver driver) {
        this.driver = driver;
        cuDeviceGetCount = lib.fn(I_A, "cuDeviceGetCount");
        cuDeviceGet = lib.fn(I_AI, "cuDeviceGet");
        cuDeviceGetName = lib.fn(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT), "cuDeviceGetName");
        cuDeviceGetAttribute = lib.fn(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT),
                "cuDeviceGetAttribute");
        cuDeviceTotalMem = lib.fn(I_AI, "cuDeviceTotalMem_v2");
        cuDevicePrimaryCtxRetain = lib.fn(I_AI, "cuDevicePrimaryCtxRetain");
        cuDevicePrimaryCtxRelease = lib.fn(I_I, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease");
        cuDevicePrimaryCtxReset = lib.fn(I_I, "cuDevicePrimaryCtxReset_v2", "cuDevicePrimaryCtxReset");
        cuCtxSetCurrent = lib.fn(I_L, "cuCtxSetCurrent");
        cuCtxSynchronize = lib.fn(I_V, "cuCtxSynchronize");
        cuCtxGetStreamPriorityRange = lib.fn(I_AA, "cuCtxGetStreamPriorityRange");
    }

    public int deviceCount() {
        return driver.outInt(cuDeviceGetCount);
    }

    public int deviceGet(int ordinal) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            driver.check(cuDeviceGet, (int) cuDeviceGet.handle().invokeExact(out, ordinal));
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    public String deviceName(int dev) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(256);
            driver.check(cuDeviceGetName, (int) cuDeviceGetName.handle().invokeExact(buf, 256, dev));
            return buf.getString(0);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    public int deviceAttribute(int attribute, int dev) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            driver.check(cuDeviceGetAttribute, (int) cuDeviceGetAttribute.handle().invokeExact(out, attribute, dev));
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    public long deviceTotalMem(int dev) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            driver.check(cuDeviceTotalMem, (int) cuDeviceTotalMem.handle().invokeExact(out, dev));
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    public long devicePrimaryCtxRetain(int dev) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            driver.check(cuDevicePrimaryCtxRetain, (int) cuDevicePrimaryCtxRetain.handle().invokeExact(out, dev));
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    public void devicePrimaryCtxRelease(int dev) {
        try {
            driver.check(cuDevicePrimaryCtxRelease, (int) cuDevicePrimaryCtxRelease.handle().invokeExact(dev));
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    /**
     * cuDevicePrimaryCtxReset_v2: destroys every allocation and all state of {@code dev}'s primary
     * context in this process (the way out of a sticky error). Does not release it: a holder of a
     * reference still holds it, and the next cuDevicePrimaryCtxRetain makes it active again.
     */
    public void devicePrimaryCtxReset(int dev) {
        try {
            driver.check(cuDevicePrimaryCtxReset, (int) cuDevicePrimaryCtxReset.handle().invokeExact(dev));
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    public void ctxSetCurrent(long ctx) {
        driver.callL(cuCtxSetCurrent, ctx);
    }

    public void ctxSynchronize() {
        try {
            driver.check(cuCtxSynchronize, (int) cuCtxSynchronize.handle().invokeExact());
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    /** {least, greatest}: numerically greatest is the lowest priority, e.g. {0, -5}. */
    public int[] ctxGetStreamPriorityRange() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment least = a.allocate(JAVA_INT);
            MemorySegment greatest = a.allocate(JAVA_INT);
            driver.check(cuCtxGetStreamPriorityRange,
                    (int) cuCtxGetStreamPriorityRange.handle().invokeExact(least, greatest));
            return new int[] {least.get(JAVA_INT, 0), greatest.get(JAVA_INT, 0)};
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }
}
