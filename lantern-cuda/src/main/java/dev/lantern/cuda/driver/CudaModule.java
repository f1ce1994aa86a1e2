package dev.lantern.cuda.driver;

import dev.lantern.cuda.ffi.ContextHealth;
import dev.lantern.cuda.ffi.CudaDriver;
import dev.lantern.cuda.ffi.CudaModuleApi;
import dev.lantern.runtime.Module;
import dev.lantern.runtime.Stream;
import java.util.concurrent.ConcurrentHashMap;

/** A loaded cubin (CUmodule); kernels are looked up once by name and cached. */
public final class CudaModule implements Module {
    private final CudaDevice device;
    private final ContextHealth generation;
    private final long handle;
    private final String key;
    private final ConcurrentHashMap<String, CudaKernel> kernels = new ConcurrentHashMap<>();
    private final ReleaseOnce release;

    CudaModule(CudaDevice device, ContextHealth generation, long handle, String key) {
        this.device = device;
        this.generation = generation;
        this.handle = handle;
        this.key = key;
        this.release = new ReleaseOnce(device, generation, () -> device.driver().modules().moduleUnload(handle));
    }

    @Override
    public String key() {
        return key;
    }

    public long handle() {
        return handle;
    }

    /** The kernel with this (extern "C") name; throws CudaException CUDA_ERROR_NOT_FOUND when absent. */
    @Override
    public CudaKernel kernel(String name) {
        return kernels.computeIfAbsent(name, n -> {
            device.makeCurrent(generation);
            return new CudaKernel(device, generation, n, device.driver().modules().moduleGetFunction(handle, n));
        });
    }

    @Override
    public void close() {
        release.run();
    }

    /** One CUfunction. */
    public static final class CudaKernel implements Module.Kernel {
        private final CudaDevice device;
        private final CudaDriver driver;
        private final ContextHealth generation;
        private final String name;
        private final long function;

        CudaKernel(CudaDevice device, ContextHealth generation, String name, long function) {
            this.device = device;
            this.generation = generation;
            this.driver = device.driver();
            this.name = name;
            this.function = function;
        }

        @Override
        public String name() {
            return name;
        }

        public long function() {
            return function;
        }

        /**
         * Launches with grid and block of 1 to 3 dimensions (missing ones are 1). Arguments:
         * Long (pointers, int64), Integer, Float, Double, Short, Byte, or a TensorStorage.
         */
        @Override
        public void launch(Stream stream, int[] grid, int[] block, int sharedBytes, Object... args) {
            CudaStream s = CudaDevice.cuda(stream);
            long params = KernelArgs.marshal(name, args);
            device.makeCurrent(generation);
            driver.modules().launchKernel(function, dim(grid, 0), dim(grid, 1), dim(grid, 2),
                    dim(block, 0), dim(block, 1), dim(block, 2), sharedBytes, s.handle(), params);
        }

        private static int dim(int[] d, int i) {
            if (d.length == 0 || d.length > 3) {
                throw new IllegalArgumentException("launch dimensions need 1 to 3 entries, got " + d.length);
            }
            return i < d.length ? d[i] : 1;
        }

        /** Opts in to more than 48 KiB of dynamic shared memory (up to the target's optin limit). */
        public void setMaxDynamicSharedBytes(int bytes) {
            device.makeCurrent(generation);
            driver.modules().funcSetAttribute(function, CudaModuleApi.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    bytes);
        }

        /** Resident blocks per SM at this block size: occupancy = blocks * blockSize / max threads per SM. */
        public int maxActiveBlocksPerSm(int blockSize, long dynamicSharedBytes) {
            device.makeCurrent(generation);
            return driver.modules().occupancyMaxActiveBlocksPerMultiprocessor(function, blockSize, dynamicSharedBytes);
        }
    }
}
