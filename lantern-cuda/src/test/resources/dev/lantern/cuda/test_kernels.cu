// Kernels for the gpu tier of lantern-cuda (compiled through NVRTC by the tests, and by
// nvcc -arch=sm_90 -cubin in the nvcc tier). Shapes: x is (n) float32.

// x[i] += 1
extern "C" __global__ void add_one(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] += 1.0f;
    }
}

// x[i] = fma(x[i], a, b): one rounding, so a Java Math.fma reference matches bit for bit
extern "C" __global__ void axpb(float* x, float a, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = __fmaf_rn(x[i], a, b);
    }
}

// Busy-waits for `cycles` SM clock cycles; if out != 0, thread 0 of each block writes the
// cycles it actually spun, so the compiler cannot drop the loop.
extern "C" __global__ void spin(long long cycles, unsigned long long* out) {
    long long start = clock64();
    long long now = start;
    while (now - start < cycles) {
        now = clock64();
    }
    if (out != 0 && threadIdx.x == 0) {
        out[blockIdx.x] = (unsigned long long)(now - start);
    }
}

// y[i] = x[i] (bf16 round trip through cuda_bf16.h, to prove the include path works)
#include <cuda_bf16.h>
extern "C" __global__ void to_bf16_and_back(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = __bfloat162float(__float2bfloat16_rn(x[i]));
    }
}
