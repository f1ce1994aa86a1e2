package dev.lantern.cuda.engine;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaModule;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.nvrtc.KernelSource;
import dev.lantern.cuda.nvrtc.ModuleCache;
import dev.lantern.ir.DType;

/**
 * Fills device buffers with seeded pseudo-random values on the GPU (benchmarks: never time on
 * zeros, and a 512 MB operand drawn on the host would cost seconds). Uniform in
 * [-scale, scale), from a SplitMix64 hash of (seed, index), so a fill is reproducible.
 */
public final class DeviceFill implements AutoCloseable {
    private static final String SRC = """
            #include <cuda_bf16.h>
            #include <cuda_fp16.h>
            __device__ __forceinline__ float lt_uniform(unsigned long long seed, long long i) {
                unsigned long long z = seed + 0x9E3779B97F4A7C15ull * (unsigned long long) (i + 1);
                z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
                z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
                z ^= z >> 31;
                return (float) (z >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f;
            }
            extern "C" __global__ void lt_fill_bf16(__nv_bfloat16* p, long long n, unsigned long long seed, float scale, float offset) {
                for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n; i += (long long) gridDim.x * blockDim.x)
                    p[i] = __float2bfloat16(offset + lt_uniform(seed, i) * scale);
            }
            extern "C" __global__ void lt_fill_f16(__half* p, long long n, unsigned long long seed, float scale, float offset) {
                for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n; i += (long long) gridDim.x * blockDim.x)
                    p[i] = __float2half(offset + lt_uniform(seed, i) * scale);
            }
            extern "C" __global__ void lt_fill_f32(float* p, long long n, unsigned long long seed, float scale, float offset) {
                for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n; i += (long long) gridDim.x * blockDim.x)
                    p[i] = offset + lt_uniform(seed, i) * scale;
            }
            """;

    private final CudaModule module;

    public DeviceFill(CudaDevice device) {
        this.module = ModuleCache.forDevice(device).load(device, source());
    }

    /** The fill kernels' source, which a compiled model package builds ahead of time with the model's own. */
    public static KernelSource source() {
        return new KernelSource("lt_fill", SRC);
    }

    /** {@code n} elements of {@code dtype} at {@code address}, uniform in [-scale, scale). */
    public void fill(CudaStream stream, long address, long n, DType dtype, long seed, float scale) {
        fill(stream, address, n, dtype, seed, scale, 0f);
    }

    /** As {@link #fill(CudaStream, long, long, DType, long, float)}, around {@code offset}. */
    public void fill(CudaStream stream, long address, long n, DType dtype, long seed, float scale, float offset) {
        String entry = switch (dtype) {
            case BF16 -> "lt_fill_bf16";
            case F16 -> "lt_fill_f16";
            case F32 -> "lt_fill_f32";
            default -> throw new IllegalArgumentException("no fill for " + dtype);
        };
        module.kernel(entry).launch(stream, new int[]{132 * 8}, new int[]{256}, 0, address, n, seed, scale, offset);
    }

    @Override
    public void close() {
        module.close();
    }
}
