package dev.lantern.cuda.ffi;

import static dev.lantern.cuda.ffi.CudaDriver.I_AA;
import static dev.lantern.cuda.ffi.CudaDriver.I_AL;
import static dev.lantern.cuda.ffi.CudaDriver.I_L;
import static dev.lantern.cuda.ffi.CudaDriver.I_LLL;
import static dev.lantern.cuda.ffi.CudaDriver.I_LLLL;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.lantern.cuda.ffi.NativeLibrary.Fn;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;

/**
 * Memory in the driver API: device memory (cuMemAlloc_v2, cuMemFree_v2, cuMemGetInfo_v2),
 * page-locked host memory, memset and memcpy, synchronous and on a stream. Out of memory is
 * {@link CudaOutOfMemoryException}. Part of {@link CudaDriver} ({@code driver.memory()}); the
 * virtual-memory calls are {@link CudaVmm}.
 */
public final class CudaMemoryApi {
    public static final int CU_MEMHOSTALLOC_PORTABLE = 0x1;

    private final CudaDriver driver;
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

    CudaMemoryApi(NativeLibrary lib, CudaDriver driver) {
        this.driver = driver;
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
    }

    /** cuMemAlloc_v2; CUDA_ERROR_OUT_OF_MEMORY becomes {@link CudaOutOfMemoryException}. */
    public long memAlloc(long bytes) {
        int rc;
        long ptr;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            rc = (int) cuMemAlloc.handle().invokeExact(out, bytes);
            ptr = out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
        if (rc == CuResult.CUDA_ERROR_OUT_OF_MEMORY) {
            throw new CudaOutOfMemoryException(cuMemAlloc.name(), bytes, null);
        }
        driver.check(cuMemAlloc, rc);
        return ptr;
    }

    public void memFree(long dptr) {
        driver.callL(cuMemFree, dptr);
    }

    /** {free, total} bytes of the current context's device. */
    public long[] memGetInfo() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment free = a.allocate(JAVA_LONG);
            MemorySegment total = a.allocate(JAVA_LONG);
            driver.check(cuMemGetInfo, (int) cuMemGetInfo.handle().invokeExact(free, total));
            return new long[] {free.get(JAVA_LONG, 0), total.get(JAVA_LONG, 0)};
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
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
            throw CudaDriver.rethrow(t);
        }
        if (rc == CuResult.CUDA_ERROR_OUT_OF_MEMORY) {
            throw new CudaOutOfMemoryException(cuMemHostAlloc.name(), bytes, "page-locked host memory");
        }
        driver.check(cuMemHostAlloc, rc);
        return ptr;
    }

    public void memFreeHost(long hostPtr) {
        driver.callL(cuMemFreeHost, hostPtr);
    }

    public void memsetD8Async(long dptr, byte value, long count, long stream) {
        try {
            driver.check(cuMemsetD8Async, (int) cuMemsetD8Async.handle().invokeExact(dptr, value & 0xff, count, stream));
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    public void memsetD32Async(long dptr, int value, long count, long stream) {
        try {
            driver.check(cuMemsetD32Async, (int) cuMemsetD32Async.handle().invokeExact(dptr, value, count, stream));
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
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
            driver.check(fn, (int) fn.handle().invokeExact(a, b, c));
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    private void call4(Fn fn, long a, long b, long c, long d) {
        try {
            driver.check(fn, (int) fn.handle().invokeExact(a, b, c, d));
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }
}
