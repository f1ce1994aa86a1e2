package dev.lantern.cuda.ffi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.lantern.cuda.ffi.NativeLibrary.Fn;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;

/**
 * The CUDA driver API ({@code libcuda.so.1}), one Java method per C function, names as in
 * {@code cuda.h} after its version macros (cuMemAlloc → cuMemAlloc_v2, cuGraphInstantiate →
 * cuGraphInstantiateWithFlags, cuEventElapsedTime → cuEventElapsedTime_v2, ...).
 *
 * <p>Opaque handles (CUcontext, CUstream, CUevent, CUmodule, CUfunction, CUgraph,
 * CUgraphExec, CUgraphNode), device pointers and host pointers are carried as {@code long}:
 * on LP64 a pointer and a 64-bit integer are passed alike, and a long needs no wrapping.
 * Every status is checked; a failure throws {@link CudaException} naming the real symbol.
 * Calls that need a context assume the caller made it current ({@code CudaDevice} does).
 */
public final class CudaDriver {
    // CUdevice_attribute values used by the runtime (cuda.h, CUDA 13.0).
    public static final int ATTR_MAX_THREADS_PER_BLOCK = 1;
    public static final int ATTR_CLOCK_RATE = 13;
    public static final int ATTR_MULTIPROCESSOR_COUNT = 16;
    public static final int ATTR_L2_CACHE_SIZE = 38;
    public static final int ATTR_COMPUTE_CAPABILITY_MAJOR = 75;
    public static final int ATTR_COMPUTE_CAPABILITY_MINOR = 76;
    public static final int ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;
    public static final int ATTR_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 102;

    public static final int CU_STREAM_NON_BLOCKING = 0x1;
    public static final int CU_EVENT_DEFAULT = 0x0;
    public static final int CU_EVENT_DISABLE_TIMING = 0x2;
    public static final int CU_MEMHOSTALLOC_PORTABLE = 0x1;
    public static final int CU_STREAM_CAPTURE_MODE_GLOBAL = 0;
    public static final int CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1;
    public static final int CU_STREAM_CAPTURE_STATUS_NONE = 0;
    public static final int CU_GRAPH_NODE_TYPE_KERNEL = 0;
    public static final int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

    private static final FunctionDescriptor I_I = FunctionDescriptor.of(JAVA_INT, JAVA_INT);
    private static final FunctionDescriptor I_A = FunctionDescriptor.of(JAVA_INT, ADDRESS);
    private static final FunctionDescriptor I_L = FunctionDescriptor.of(JAVA_INT, JAVA_LONG);
    private static final FunctionDescriptor I_V = FunctionDescriptor.of(JAVA_INT);
    private static final FunctionDescriptor I_AA = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS);
    private static final FunctionDescriptor I_AL = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG);
    private static final FunctionDescriptor I_AI = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT);
    private static final FunctionDescriptor I_LL = FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG);
    private static final FunctionDescriptor I_LI = FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT);
    private static final FunctionDescriptor I_LLL = FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG);
    private static final FunctionDescriptor I_LLLL =
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG);

    private final NativeLibrary lib;
    private CudaVmm vmm;

    private final Fn cuGetErrorName;
    private final Fn cuGetErrorString;
    private final Fn cuInit;
    private final Fn cuDriverGetVersion;
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
    private final Fn cuMemAlloc;
    private final Fn cuMemFree;
    private final Fn cuMemGetInfo;
    private final Fn cuMemHostAlloc;
    private final Fn cuMemFreeHost;
    private final Fn cuMemsetD8Async;
    private final Fn cuMemsetD32Async;
    private final Fn cuMemcpyHtoD;
    private final Fn cuMemcpyDtoH;
    private final Fn cuMemcpyDtoD;
    private final Fn cuMemcpyHtoDAsync;
    private final Fn cuMemcpyDtoHAsync;
    private final Fn cuMemcpyDtoDAsync;
    private final Fn cuStreamCreateWithPriority;
    private final Fn cuStreamDestroy;
    private final Fn cuStreamSynchronize;
    private final Fn cuStreamWaitEvent;
    private final Fn cuEventCreate;
    private final Fn cuEventRecord;
    private final Fn cuEventQuery;
    private final Fn cuEventSynchronize;
    private final Fn cuEventElapsedTime;
    private final Fn cuEventDestroy;
    private final Fn cuModuleLoadData;
    private final Fn cuModuleUnload;
    private final Fn cuModuleGetFunction;
    private final Fn cuFuncSetAttribute;
    private final Fn cuLaunchKernel;
    private final Fn cuOccupancyMaxActiveBlocksPerMultiprocessor;
    private final Fn cuStreamBeginCapture;
    private final Fn cuStreamEndCapture;
    private final Fn cuStreamIsCapturing;
    private final Fn cuGraphInstantiate;
    private final Fn cuGraphLaunch;
    private final Fn cuGraphExecUpdate;
    private final Fn cuGraphDestroy;
    private final Fn cuGraphExecDestroy;
    private final Fn cuGraphGetNodes;
    private final Fn cuGraphNodeGetType;
    private final Fn cuTensorMapEncodeTiled;

    public CudaDriver(NativeLibrary lib) {
        this.lib = lib;
        cuGetErrorName = lib.fn(I_IA(), "cuGetErrorName");
        cuGetErrorString = lib.fn(I_IA(), "cuGetErrorString");
        cuInit = lib.fn(I_I, "cuInit");
        cuDriverGetVersion = lib.fn(I_A, "cuDriverGetVersion");
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
        cuMemAlloc = lib.fn(I_AL, "cuMemAlloc_v2");
        cuMemFree = lib.fn(I_L, "cuMemFree_v2");
        cuMemGetInfo = lib.fn(I_AA, "cuMemGetInfo_v2");
        cuMemHostAlloc = lib.fn(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT), "cuMemHostAlloc");
        cuMemFreeHost = lib.fn(I_L, "cuMemFreeHost");
        cuMemsetD8Async = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG),
                "cuMemsetD8Async");
        cuMemsetD32Async = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG),
                "cuMemsetD32Async");
        cuMemcpyHtoD = lib.fn(I_LLL, "cuMemcpyHtoD_v2");
        cuMemcpyDtoH = lib.fn(I_LLL, "cuMemcpyDtoH_v2");
        cuMemcpyDtoD = lib.fn(I_LLL, "cuMemcpyDtoD_v2");
        cuMemcpyHtoDAsync = lib.fn(I_LLLL, "cuMemcpyHtoDAsync_v2");
        cuMemcpyDtoHAsync = lib.fn(I_LLLL, "cuMemcpyDtoHAsync_v2");
        cuMemcpyDtoDAsync = lib.fn(I_LLLL, "cuMemcpyDtoDAsync_v2");
        cuStreamCreateWithPriority = lib.fn(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT),
                "cuStreamCreateWithPriority");
        cuStreamDestroy = lib.fn(I_L, "cuStreamDestroy_v2");
        cuStreamSynchronize = lib.fn(I_L, "cuStreamSynchronize");
        cuStreamWaitEvent = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT),
                "cuStreamWaitEvent");
        cuEventCreate = lib.fn(I_AI, "cuEventCreate");
        cuEventRecord = lib.fn(I_LL, "cuEventRecord");
        cuEventQuery = lib.fn(I_L, "cuEventQuery");
        cuEventSynchronize = lib.fn(I_L, "cuEventSynchronize");
        cuEventElapsedTime = lib.fn(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG),
                "cuEventElapsedTime_v2", "cuEventElapsedTime");
        cuEventDestroy = lib.fn(I_L, "cuEventDestroy_v2");
        cuModuleLoadData = lib.fn(I_AA, "cuModuleLoadData");
        cuModuleUnload = lib.fn(I_L, "cuModuleUnload");
        cuModuleGetFunction = lib.fn(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS),
                "cuModuleGetFunction");
        cuFuncSetAttribute = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_INT),
                "cuFuncSetAttribute");
        // CUresult cuLaunchKernel(f, gx, gy, gz, bx, by, bz, sharedBytes, stream, void** params, void** extra)
        cuLaunchKernel = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT,
                JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG), "cuLaunchKernel");
        cuOccupancyMaxActiveBlocksPerMultiprocessor = lib.fn(
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_LONG),
                "cuOccupancyMaxActiveBlocksPerMultiprocessor");
        cuStreamBeginCapture = lib.fn(I_LI, "cuStreamBeginCapture_v2");
        cuStreamEndCapture = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS), "cuStreamEndCapture");
        cuStreamIsCapturing = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS), "cuStreamIsCapturing");
        cuGraphInstantiate = lib.fn(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG),
                "cuGraphInstantiateWithFlags");
        cuGraphLaunch = lib.fn(I_LL, "cuGraphLaunch");
        cuGraphExecUpdate = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, ADDRESS),
                "cuGraphExecUpdate_v2");
        cuGraphDestroy = lib.fn(I_L, "cuGraphDestroy");
        cuGraphExecDestroy = lib.fn(I_L, "cuGraphExecDestroy");
        cuGraphGetNodes = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS), "cuGraphGetNodes");
        cuGraphNodeGetType = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS), "cuGraphNodeGetType");
        // CUresult cuTensorMapEncodeTiled(CUtensorMap*, dtype, rank, void* global, const cuuint64_t* dims,
        //     const cuuint64_t* strides, const cuuint32_t* box, const cuuint32_t* elementStrides,
        //     interleave, swizzle, l2Promotion, oobFill)
        cuTensorMapEncodeTiled = lib.fn(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, JAVA_LONG,
                ADDRESS, ADDRESS, ADDRESS, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), "cuTensorMapEncodeTiled");
    }

    /** CU_TENSOR_MAP_DATA_TYPE_FLOAT16 / BFLOAT16, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B. */
    public static final int TMAP_F16 = 6, TMAP_BF16 = 9, TMAP_SWIZZLE_128B = 3, TMAP_L2_128B = 2;

    /**
     * Encodes a tiled tensor map (sm_90+) into {@code out} (128 bytes, 64-byte aligned):
     * {@code dims[0]} is the contiguous dimension; {@code stridesBytes} has rank - 1 entries
     * (dimensions 1..); no interleave, out-of-range elements read as zero.
     */
    public void tensorMapEncodeTiled(MemorySegment out, int dtype, long globalAddress, long[] dims,
                                     long[] stridesBytes, int[] box, int swizzle, int l2Promotion) {
        int rank = dims.length;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment d = a.allocateFrom(JAVA_LONG, dims);
            MemorySegment st = a.allocateFrom(JAVA_LONG, stridesBytes);
            MemorySegment b = a.allocateFrom(JAVA_INT, box);
            int[] ones = new int[rank];
            java.util.Arrays.fill(ones, 1);
            MemorySegment es = a.allocateFrom(JAVA_INT, ones);
            check(cuTensorMapEncodeTiled, (int) cuTensorMapEncodeTiled.handle().invokeExact(out, dtype, rank,
                    globalAddress, d, st, b, es, 0, swizzle, l2Promotion, 0));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private static FunctionDescriptor I_IA() {
        return FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS);
    }

    public LibraryProbe probe() {
        return lib.probe();
    }

    // ---- errors ----------------------------------------------------------------------------

    /** "CUDA_ERROR_OUT_OF_MEMORY": from the driver when it can say, else from the header table. */
    public String errorName(int rc) {
        String name = cString(cuGetErrorName, rc);
        return name != null ? name : CuResult.name(rc);
    }

    public String errorString(int rc) {
        return cString(cuGetErrorString, rc);
    }

    private static String cString(Fn fn, int rc) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            int r = (int) fn.handle().invokeExact(rc, out);
            MemorySegment p = out.get(ADDRESS, 0);
            if (r != 0 || p.address() == 0) {
                return null;
            }
            return p.reinterpret(4096).getString(0);
        } catch (Throwable t) {
            return null;
        }
    }

    /** Throws the typed exception for a failed call; OOM gets {@link CudaOutOfMemoryException}. */
    public void check(Fn fn, int rc) {
        if (rc != 0) {
            throw failure(fn.name(), rc);
        }
    }

    /**
     * The exception for a failed call. A sticky code ({@link CuResult#isContextLost}) marks the
     * context current on this thread as lost and becomes {@link CudaContextLostException}; once
     * that context is lost, every failure on it is reported as that loss ({@link ContextHealth}).
     */
    public CudaException failure(String call, int rc) {
        return ContextHealth.classifyOnCurrentThread(new CudaException(call, rc, errorName(rc), errorString(rc)));
    }

    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    // ---- init, devices, contexts -----------------------------------------------------------

    public void init() {
        try {
            check(cuInit, (int) cuInit.handle().invokeExact(0));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** e.g. 13000 for CUDA 13.0. Needs no cuInit. */
    public int driverVersion() {
        return outInt(cuDriverGetVersion);
    }

    public int deviceCount() {
        return outInt(cuDeviceGetCount);
    }

    private int outInt(Fn fn) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            check(fn, (int) fn.handle().invokeExact(out));
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public int deviceGet(int ordinal) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            check(cuDeviceGet, (int) cuDeviceGet.handle().invokeExact(out, ordinal));
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public String deviceName(int dev) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(256);
            check(cuDeviceGetName, (int) cuDeviceGetName.handle().invokeExact(buf, 256, dev));
            return buf.getString(0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public int deviceAttribute(int attribute, int dev) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            check(cuDeviceGetAttribute, (int) cuDeviceGetAttribute.handle().invokeExact(out, attribute, dev));
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public long deviceTotalMem(int dev) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            check(cuDeviceTotalMem, (int) cuDeviceTotalMem.handle().invokeExact(out, dev));
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public long devicePrimaryCtxRetain(int dev) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            check(cuDevicePrimaryCtxRetain, (int) cuDevicePrimaryCtxRetain.handle().invokeExact(out, dev));
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public void devicePrimaryCtxRelease(int dev) {
        try {
            check(cuDevicePrimaryCtxRelease, (int) cuDevicePrimaryCtxRelease.handle().invokeExact(dev));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * cuDevicePrimaryCtxReset_v2: destroys every allocation and all state of {@code dev}'s primary
     * context in this process (the way out of a sticky error). Does not release it: a holder of a
     * reference still holds it, and the next cuDevicePrimaryCtxRetain makes it active again.
     */
    public void devicePrimaryCtxReset(int dev) {
        try {
            check(cuDevicePrimaryCtxReset, (int) cuDevicePrimaryCtxReset.handle().invokeExact(dev));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public void ctxSetCurrent(long ctx) {
        callL(cuCtxSetCurrent, ctx);
    }

    public void ctxSynchronize() {
        try {
            check(cuCtxSynchronize, (int) cuCtxSynchronize.handle().invokeExact());
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {least, greatest}: numerically greatest is the lowest priority, e.g. {0, -5}. */
    public int[] ctxGetStreamPriorityRange() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment least = a.allocate(JAVA_INT);
            MemorySegment greatest = a.allocate(JAVA_INT);
            check(cuCtxGetStreamPriorityRange,
                    (int) cuCtxGetStreamPriorityRange.handle().invokeExact(least, greatest));
            return new int[] {least.get(JAVA_INT, 0), greatest.get(JAVA_INT, 0)};
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private void callL(Fn fn, long arg) {
        try {
            check(fn, (int) fn.handle().invokeExact(arg));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    // ---- memory ----------------------------------------------------------------------------

    /** cuMemAlloc_v2; CUDA_ERROR_OUT_OF_MEMORY becomes {@link CudaOutOfMemoryException}. */
    public long memAlloc(long bytes) {
        int rc;
        long ptr;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            rc = (int) cuMemAlloc.handle().invokeExact(out, bytes);
            ptr = out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (rc == CuResult.CUDA_ERROR_OUT_OF_MEMORY) {
            throw new CudaOutOfMemoryException(cuMemAlloc.name(), bytes, null);
        }
        check(cuMemAlloc, rc);
        return ptr;
    }

    public void memFree(long dptr) {
        callL(cuMemFree, dptr);
    }

    /** {free, total} bytes of the current context's device. */
    public long[] memGetInfo() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment free = a.allocate(JAVA_LONG);
            MemorySegment total = a.allocate(JAVA_LONG);
            check(cuMemGetInfo, (int) cuMemGetInfo.handle().invokeExact(free, total));
            return new long[] {free.get(JAVA_LONG, 0), total.get(JAVA_LONG, 0)};
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Page-locked host memory; returns the host address. */
    public long memHostAlloc(long bytes, int flags) {
        int rc;
        long ptr;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            rc = (int) cuMemHostAlloc.handle().invokeExact(out, bytes, flags);
            ptr = out.get(ADDRESS, 0).address();
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (rc == CuResult.CUDA_ERROR_OUT_OF_MEMORY) {
            throw new CudaOutOfMemoryException(cuMemHostAlloc.name(), bytes, "page-locked host memory");
        }
        check(cuMemHostAlloc, rc);
        return ptr;
    }

    public void memFreeHost(long hostPtr) {
        callL(cuMemFreeHost, hostPtr);
    }

    public void memsetD8Async(long dptr, byte value, long count, long stream) {
        try {
            check(cuMemsetD8Async, (int) cuMemsetD8Async.handle().invokeExact(dptr, value & 0xff, count, stream));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public void memsetD32Async(long dptr, int value, long count, long stream) {
        try {
            check(cuMemsetD32Async, (int) cuMemsetD32Async.handle().invokeExact(dptr, value, count, stream));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public void memcpyHtoD(long dst, long srcHost, long bytes) {
        call3(cuMemcpyHtoD, dst, srcHost, bytes);
    }

    public void memcpyDtoH(long dstHost, long src, long bytes) {
        call3(cuMemcpyDtoH, dstHost, src, bytes);
    }

    public void memcpyDtoD(long dst, long src, long bytes) {
        call3(cuMemcpyDtoD, dst, src, bytes);
    }

    public void memcpyHtoDAsync(long dst, long srcHost, long bytes, long stream) {
        call4(cuMemcpyHtoDAsync, dst, srcHost, bytes, stream);
    }

    public void memcpyDtoHAsync(long dstHost, long src, long bytes, long stream) {
        call4(cuMemcpyDtoHAsync, dstHost, src, bytes, stream);
    }

    public void memcpyDtoDAsync(long dst, long src, long bytes, long stream) {
        call4(cuMemcpyDtoDAsync, dst, src, bytes, stream);
    }

    private void call3(Fn fn, long a, long b, long c) {
        try {
            check(fn, (int) fn.handle().invokeExact(a, b, c));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private void call4(Fn fn, long a, long b, long c, long d) {
        try {
            check(fn, (int) fn.handle().invokeExact(a, b, c, d));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    // ---- streams and events ----------------------------------------------------------------

    public long streamCreateWithPriority(int flags, int priority) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            check(cuStreamCreateWithPriority,
                    (int) cuStreamCreateWithPriority.handle().invokeExact(out, flags, priority));
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public void streamDestroy(long stream) {
        callL(cuStreamDestroy, stream);
    }

    public void streamSynchronize(long stream) {
        callL(cuStreamSynchronize, stream);
    }

    public void streamWaitEvent(long stream, long event) {
        try {
            check(cuStreamWaitEvent, (int) cuStreamWaitEvent.handle().invokeExact(stream, event, 0));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public long eventCreate(int flags) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            check(cuEventCreate, (int) cuEventCreate.handle().invokeExact(out, flags));
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public void eventRecord(long event, long stream) {
        try {
            check(cuEventRecord, (int) cuEventRecord.handle().invokeExact(event, stream));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** True when complete; CUDA_ERROR_NOT_READY is the "not yet" answer, not an error. */
    public boolean eventQuery(long event) {
        int rc;
        try {
            rc = (int) cuEventQuery.handle().invokeExact(event);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (rc == CuResult.CUDA_ERROR_NOT_READY) {
            return false;
        }
        check(cuEventQuery, rc);
        return true;
    }

    public void eventSynchronize(long event) {
        callL(cuEventSynchronize, event);
    }

    public float eventElapsedTime(long start, long end) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_FLOAT);
            check(cuEventElapsedTime, (int) cuEventElapsedTime.handle().invokeExact(out, start, end));
            return out.get(JAVA_FLOAT, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public void eventDestroy(long event) {
        callL(cuEventDestroy, event);
    }

    // ---- modules and launches --------------------------------------------------------------

    /** Loads a cubin image (the segment must be native memory holding the whole image). */
    public long moduleLoadData(MemorySegment image) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            check(cuModuleLoadData, (int) cuModuleLoadData.handle().invokeExact(out, image));
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public void moduleUnload(long module) {
        callL(cuModuleUnload, module);
    }

    public long moduleGetFunction(long module, String name) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            int rc = (int) cuModuleGetFunction.handle().invokeExact(out, module, a.allocateFrom(name));
            if (rc != 0) {
                throw ContextHealth.classifyOnCurrentThread(
                        new CudaException(cuModuleGetFunction.name(), rc, errorName(rc), "kernel '" + name + "'"));
            }
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public void funcSetAttribute(long function, int attribute, int value) {
        try {
            check(cuFuncSetAttribute, (int) cuFuncSetAttribute.handle().invokeExact(function, attribute, value));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code params} is the address of a void*[] with one pointer per kernel argument. */
    public void launchKernel(long function, int gx, int gy, int gz, int bx, int by, int bz,
                             int sharedBytes, long stream, long params) {
        try {
            int rc = (int) cuLaunchKernel.handle().invokeExact(function, gx, gy, gz, bx, by, bz,
                    sharedBytes, stream, params, 0L);
            check(cuLaunchKernel, rc);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public int occupancyMaxActiveBlocksPerMultiprocessor(long function, int blockSize, long dynamicSmem) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            check(cuOccupancyMaxActiveBlocksPerMultiprocessor, (int) cuOccupancyMaxActiveBlocksPerMultiprocessor
                    .handle().invokeExact(out, function, blockSize, dynamicSmem));
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    // ---- stream capture and graphs ---------------------------------------------------------

    public void streamBeginCapture(long stream, int mode) {
        try {
            check(cuStreamBeginCapture, (int) cuStreamBeginCapture.handle().invokeExact(stream, mode));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * Ends capture. Returns {rc, graph}: the caller decides what an invalidated capture means
     * (the graph is 0 then), because ending a failed capture is part of normal recovery.
     */
    public long[] streamEndCapture(long stream) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            int rc = (int) cuStreamEndCapture.handle().invokeExact(stream, out);
            return new long[] {rc, out.get(JAVA_LONG, 0)};
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public String endCaptureName() {
        return cuStreamEndCapture.name();
    }

    /** CUstreamCaptureStatus: 0 none, 1 active, 2 invalidated. */
    public int streamIsCapturing(long stream) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            check(cuStreamIsCapturing, (int) cuStreamIsCapturing.handle().invokeExact(stream, out));
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public long graphInstantiate(long graph, long flags) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            check(cuGraphInstantiate, (int) cuGraphInstantiate.handle().invokeExact(out, graph, flags));
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public void graphLaunch(long exec, long stream) {
        try {
            check(cuGraphLaunch, (int) cuGraphLaunch.handle().invokeExact(exec, stream));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** CUgraphExecUpdateResultInfo: {int result; CUgraphNode errorNode; CUgraphNode errorFromNode}. */
    private static final MemoryLayout UPDATE_INFO = MemoryLayout.structLayout(
            JAVA_INT.withName("result"), MemoryLayout.paddingLayout(4),
            JAVA_LONG.withName("errorNode"), JAVA_LONG.withName("errorFromNode"));

    /**
     * Updates an instantiated graph in place from a new capture of the same topology.
     * Returns 0 (CU_GRAPH_EXEC_UPDATE_SUCCESS) or the CUgraphExecUpdateResult explaining why
     * not, in which case the caller re-instantiates; other failures throw.
     */
    public int graphExecUpdate(long exec, long graph) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment info = a.allocate(UPDATE_INFO);
            int rc = (int) cuGraphExecUpdate.handle().invokeExact(exec, graph, info);
            int result = info.get(JAVA_INT, 0);
            if (rc == 0) {
                return 0;
            }
            if (result != 0) {
                return result; // CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE with a reason
            }
            check(cuGraphExecUpdate, rc);
            return 0;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public void graphDestroy(long graph) {
        callL(cuGraphDestroy, graph);
    }

    public void graphExecDestroy(long exec) {
        callL(cuGraphExecDestroy, exec);
    }

    public long[] graphGetNodes(long graph) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment count = a.allocate(JAVA_LONG);
            check(cuGraphGetNodes, (int) cuGraphGetNodes.handle().invokeExact(graph, MemorySegment.NULL, count));
            long n = count.get(JAVA_LONG, 0);
            if (n == 0) {
                return new long[0];
            }
            MemorySegment nodes = a.allocate(JAVA_LONG, n);
            check(cuGraphGetNodes, (int) cuGraphGetNodes.handle().invokeExact(graph, nodes, count));
            return nodes.asSlice(0, count.get(JAVA_LONG, 0) * 8).toArray(JAVA_LONG);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public int graphNodeGetType(long node) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            check(cuGraphNodeGetType, (int) cuGraphNodeGetType.handle().invokeExact(node, out));
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** The virtual-memory part of this driver (cuMemCreate, cuMemMap, ...), bound on first use. */
    public synchronized CudaVmm vmm() {
        if (vmm == null) {
            vmm = new CudaVmm(lib, this);
        }
        return vmm;
    }
}
