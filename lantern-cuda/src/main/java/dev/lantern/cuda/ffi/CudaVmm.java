package dev.lantern.cuda.ffi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.lantern.cuda.ffi.NativeLibrary.Fn;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;

/**
 * The driver's virtual-memory management API (libcuda.so.1, CUDA 10.2+), for expandable
 * segments: reserve address space, create physical pages, map them, set access, unmap,
 * release. Kept apart from {@link CudaDriver} because only the allocator's VMM uses it;
 * errors are reported through the driver's names like every other driver call.
 */
public final class CudaVmm {
    private final CudaDriver driver;
    private final Fn cuMemGetAllocationGranularity;
    private final Fn cuMemAddressReserve;
    private final Fn cuMemAddressFree;
    private final Fn cuMemCreate;
    private final Fn cuMemRelease;
    private final Fn cuMemMap;
    private final Fn cuMemUnmap;
    private final Fn cuMemSetAccess;

    CudaVmm(NativeLibrary lib, CudaDriver driver) {
        this.driver = driver;
        cuMemGetAllocationGranularity = lib.fn(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT),
                "cuMemGetAllocationGranularity");
        // (CUdeviceptr* ptr, size, alignment, CUdeviceptr addr, flags)
        cuMemAddressReserve = lib.fn(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG,
                JAVA_LONG), "cuMemAddressReserve");
        cuMemAddressFree = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG), "cuMemAddressFree");
        cuMemCreate = lib.fn(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG), "cuMemCreate");
        cuMemRelease = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG), "cuMemRelease");
        // (CUdeviceptr ptr, size, offset, CUmemGenericAllocationHandle handle, flags)
        cuMemMap = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG),
                "cuMemMap");
        cuMemUnmap = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG), "cuMemUnmap");
        cuMemSetAccess = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG),
                "cuMemSetAccess");
    }

    /**
     * CUmemAllocationProp for pinned device memory on {@code device}: {int type = PINNED (1);
     * int requestedHandleTypes = 0; CUmemLocation {int type = DEVICE (1); int id}; void*
     * win32HandleMetaData; allocFlags (8 bytes)} = 32 bytes, zero except those fields.
     */
    private static MemorySegment deviceAllocationProp(Arena a, int device) {
        MemorySegment prop = a.allocate(32, 8);
        prop.set(JAVA_INT, 0, 1);
        prop.set(JAVA_INT, 8, 1);
        prop.set(JAVA_INT, 12, device);
        return prop;
    }

    /** cuMemGetAllocationGranularity for device memory; {@code recommended} picks the faster size. */
    public long memGetAllocationGranularity(int device, boolean recommended) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            driver.check(cuMemGetAllocationGranularity, (int) cuMemGetAllocationGranularity.handle().invokeExact(out,
                    deviceAllocationProp(a, device), recommended ? 1 : 0));
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    /** Reserves {@code bytes} of device address space; OOM (no address space) is the typed exception. */
    public long memAddressReserve(long bytes, long alignment) {
        int rc;
        long ptr;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            rc = (int) cuMemAddressReserve.handle().invokeExact(out, bytes, alignment, 0L, 0L);
            ptr = out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
        if (rc == CuResult.CUDA_ERROR_OUT_OF_MEMORY) {
            throw new CudaOutOfMemoryException(cuMemAddressReserve.name(), bytes, "address space");
        }
        driver.check(cuMemAddressReserve, rc);
        return ptr;
    }

    public void memAddressFree(long ptr, long bytes) {
        try {
            driver.check(cuMemAddressFree, (int) cuMemAddressFree.handle().invokeExact(ptr, bytes));
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    /** Physical device memory (a CUmemGenericAllocationHandle); OOM is the typed exception. */
    public long memCreate(long bytes, int device) {
        int rc;
        long handle;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            rc = (int) cuMemCreate.handle().invokeExact(out, bytes, deviceAllocationProp(a, device), 0L);
            handle = out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
        if (rc == CuResult.CUDA_ERROR_OUT_OF_MEMORY) {
            throw new CudaOutOfMemoryException(cuMemCreate.name(), bytes, "physical pages");
        }
        driver.check(cuMemCreate, rc);
        return handle;
    }

    public void memRelease(long handle) {
        try {
            driver.check(cuMemRelease, (int) cuMemRelease.handle().invokeExact(handle));
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    public void memMap(long ptr, long bytes, long offset, long handle) {
        try {
            driver.check(cuMemMap, (int) cuMemMap.handle().invokeExact(ptr, bytes, offset, handle, 0L));
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    public void memUnmap(long ptr, long bytes) {
        try {
            driver.check(cuMemUnmap, (int) cuMemUnmap.handle().invokeExact(ptr, bytes));
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    /** Read-write access for {@code device} to a mapped range: CUmemAccessDesc {CUmemLocation; int flags = 3}. */
    public void memSetAccessReadWrite(long ptr, long bytes, int device) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment desc = a.allocate(12, 4);
            desc.set(JAVA_INT, 0, 1);      // CU_MEM_LOCATION_TYPE_DEVICE
            desc.set(JAVA_INT, 4, device);
            desc.set(JAVA_INT, 8, 3);      // CU_MEM_ACCESS_FLAGS_PROT_READWRITE
            driver.check(cuMemSetAccess, (int) cuMemSetAccess.handle().invokeExact(ptr, bytes, desc, 1L));
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }
}
