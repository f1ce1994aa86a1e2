package dev.lantern.cuda.driver;

/**
 * The facts about one GPU that code generation and the module cache depend on. Backend
 * differences are data (STYLE.md): kernels read this record, never "if H200".
 *
 * @param ordinal                 CUDA device ordinal
 * @param name                    e.g. "NVIDIA H200"
 * @param ccMajor                 compute capability, e.g. 9
 * @param ccMinor                 e.g. 0
 * @param smCount                 streaming multiprocessors, e.g. 132
 * @param maxSharedPerBlockOptin  bytes a block may use after opting in, e.g. 232448
 * @param clockKHz                typical SM clock in kHz
 * @param l2Bytes                 L2 cache size in bytes
 * @param totalMemory             device memory in bytes
 */
public record DeviceInfo(int ordinal, String name, int ccMajor, int ccMinor, int smCount,
                         int maxSharedPerBlockOptin, int clockKHz, int l2Bytes, long totalMemory) {
    /** "sm_90": the NVRTC architecture and part of every kernel cache key. */
    public String arch() {
        return "sm_" + ccMajor + ccMinor;
    }

    /** "NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB)". */
    public String describe() {
        return String.format("%s (%s, %d SMs, %.1f GiB)", name, arch(), smCount, totalMemory / (double) (1L << 30));
    }
}
