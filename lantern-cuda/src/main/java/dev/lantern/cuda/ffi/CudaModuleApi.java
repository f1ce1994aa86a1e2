package dev.lantern.cuda.ffi;

import static dev.lantern.cuda.ffi.CudaDriver.I_AA;
import static dev.lantern.cuda.ffi.CudaDriver.I_L;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.lantern.cuda.ffi.NativeLibrary.Fn;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;

/**
 * Modules and launches in the driver API: load a cubin, look up its kernels, set their
 * attributes, ask their occupancy, launch them, and encode the TMA tensor maps (sm_90+) that
 * kernels take as arguments. Part of {@link CudaDriver} ({@code driver.modules()}).
 */
public final class CudaModuleApi {
    public static final int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

    /** CU_TENSOR_MAP_DATA_TYPE_FLOAT16 / BFLOAT16, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B. */
    public static final int TMAP_F16 = 6, TMAP_BF16 = 9, TMAP_SWIZZLE_128B = 3, TMAP_L2_128B = 2;

    private final CudaDriver driver;
    private final Fn cuModuleLoadData;
    private final Fn cuModuleUnload;
    private final Fn cuModuleGetFunction;
    private final Fn cuFuncSetAttribute;
    private final Fn cuLaunchKernel;
    private final Fn cuOccupancyMaxActiveBlocksPerMultiprocessor;
    private final Fn cuTensorMapEncodeTiled;

    CudaModuleApi(NativeLibrary lib, CudaDriver driver) {
        this.driver = driver;
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
        // CUresult cuTensorMapEncodeTiled(CUtensorMap*, dtype, rank, void* global, const cuuint64_t* dims,
        //     const cuuint64_t* strides, const cuuint32_t* box, const cuuint32_t* elementStrides,
        //     interleave, swizzle, l2Promotion, oobFill)
        cuTensorMapEncodeTiled = lib.fn(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, JAVA_LONG,
                ADDRESS, ADDRESS, ADDRESS, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), "cuTensorMapEncodeTiled");
    }

    /** Loads a cubin image (the segment must be native memory holding the whole image). */
    public long moduleLoadData(MemorySegment image) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            driver.check(cuModuleLoadData, (int) cuModuleLoadData.handle().invokeExact(out, image));
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    public void moduleUnload(long module) {
        driver.callL(cuModuleUnload, module);
    }

    public long moduleGetFunction(long module, String name) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            int rc = (int) cuModuleGetFunction.handle().invokeExact(out, module, a.allocateFrom(name));
            if (rc != 0) {
                throw ContextHealth.classifyOnCurrentThread(
                        new CudaException(cuModuleGetFunction.name(), rc, driver.errorName(rc), "kernel '" + name + "'"));
            }
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    public void funcSetAttribute(long function, int attribute, int value) {
        try {
            driver.check(cuFuncSetAttribute, (int) cuFuncSetAttribute.handle().invokeExact(function, attribute, value));
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    /** {@code params} is the address of a void*[] with one pointer per kernel argument. */
    public void launchKernel(long function, int gx, int gy, int gz, int bx, int by, int bz,
                             int sharedBytes, long stream, long params) {
        try {
            int rc = (int) cuLaunchKernel.handle().invokeExact(function, gx, gy, gz, bx, by, bz,
                    sharedBytes, stream, params, 0L);
            driver.check(cuLaunchKernel, rc);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    public int occupancyMaxActiveBlocksPerMultiprocessor(long function, int blockSize, long dynamicSmem) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            driver.check(cuOccupancyMaxActiveBlocksPerMultiprocessor, (int) cuOccupancyMaxActiveBlocksPerMultiprocessor
                    .handle().invokeExact(out, function, blockSize, dynamicSmem));
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

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
            driver.check(cuTensorMapEncodeTiled, (int) cuTensorMapEncodeTiled.handle().invokeExact(out, dtype, rank,
                    globalAddress, d, st, b, es, 0, swizzle, l2Promotion, 0));
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }
}
