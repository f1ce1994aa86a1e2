package dev.lantern.cuda.gpu;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaModule;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.nvrtc.KernelSource;
import dev.lantern.cuda.nvrtc.ModuleCache;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What the gpu tier shares: one device opened once for the whole run (so the free memory
 * at open is the baseline the last test class checks against), the test kernels compiled
 * once through real NVRTC into a private cache folder, and where results go ($OUT there).
 */
public final class Gpu {
    private static CudaDevice device;
    private static long freeAtOpen;
    private static long freeAtContext;
    private static ModuleCache cache;
    private static CudaModule kernels;
    private static Path cacheDir;

    private Gpu() {}

    public static synchronized CudaDevice device() {
        if (device == null) {
            device = CudaDevice.open(0);
            freeAtContext = device.freeMemory();
            try {
                warmUp();
            } catch (RuntimeException | AssertionError e) {
                System.out.println("[gpu] warm-up failed (the cuBLASLt tests will say why): " + e);
            }
            freeAtOpen = device.freeMemory();
            System.out.println("[gpu] opened " + device + "; free at context creation " + freeAtContext
                    + " bytes, after warm-up " + freeAtOpen + " bytes");
        }
        return device;
    }

    /**
     * Takes the one-time, context-lifetime costs before the baseline: cuBLASLt loads its
     * kernels into the context lazily on first use and keeps them after its handle is
     * destroyed, which is not a leak. A leak is memory that grows with use; the last class
     * checks for that against the warmed-up baseline and reports the raw figure beside it.
     */
    private static void warmUp() {
        CublasLtGpuTest warm = new CublasLtGpuTest();
        warm.linearLayerWithBiasEpilogue();
        warm.stridedBatchWithTransposedA();
        new CublasLtBf16GpuTest().geluBiasEpilogueInBf16();
        device.synchronize();
    }

    public static synchronized long freeAtContext() {
        device();
        return freeAtContext;
    }

    public static synchronized long freeAtOpen() {
        device();
        return freeAtOpen;
    }

    public static synchronized Path cacheDir() {
        if (cacheDir == null) {
            try {
                cacheDir = Files.createTempDirectory("lantern-kernels-");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return cacheDir;
    }

    public static synchronized ModuleCache cache() {
        if (cache == null) {
            cache = ModuleCache.forDevice(device(), cacheDir());
        }
        return cache;
    }

    public static String kernelSource() {
        try (InputStream in = Gpu.class.getResourceAsStream("/dev/lantern/cuda/test_kernels.cu")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static KernelSource testKernels() {
        return new KernelSource("test_kernels", kernelSource(), List.of(), "gpu-tier");
    }

    /** The test kernels (add_one, axpb, spin, to_bf16_and_back), loaded once. */
    public static synchronized CudaModule kernels() {
        if (kernels == null) {
            kernels = cache().load(device(), testKernels());
        }
        return kernels;
    }

    /** Closes what the tier opened, except the device (the last class measures memory with it). */
    public static synchronized void releaseShared() {
        if (kernels != null) {
            kernels.close();
            kernels = null;
        }
    }

    /** Where figures go: $OUT on the GPU machine, else target/. */
    public static Path outDir() {
        String out = System.getenv("OUT");
        Path p = out != null && !out.isBlank() ? Path.of(out) : Path.of("target");
        try {
            return Files.createDirectories(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static void upload(CudaStream s, float[] host, CudaStorage dst) {
        try (CudaStorage pinned = device().allocatePinned(4L * host.length)) {
            MemorySegment.copy(host, 0, pinned.hostSegment(), ValueLayout.JAVA_FLOAT, 0, host.length);
            s.copy(pinned, 0, dst, 0, 4L * host.length);
            s.synchronize();
        }
    }

    public static float[] download(CudaStream s, CudaStorage src, int n) {
        try (CudaStorage pinned = device().allocatePinned(4L * n)) {
            pinned.hostSegment().fill((byte) 0x7f); // poison: NaN-ish pattern if nothing is written
            s.copy(src, 0, pinned, 0, 4L * n);
            s.synchronize();
            float[] out = new float[n];
            MemorySegment.copy(pinned.hostSegment(), ValueLayout.JAVA_FLOAT, 0, out, 0, n);
            return out;
        }
    }

    public static int blocks(int n, int threads) {
        return (n + threads - 1) / threads;
    }
}
