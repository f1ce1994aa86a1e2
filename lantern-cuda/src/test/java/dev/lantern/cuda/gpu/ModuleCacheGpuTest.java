package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaModule;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.nvrtc.KernelCompileException;
import dev.lantern.cuda.nvrtc.KernelSource;
import dev.lantern.cuda.nvrtc.ModuleCache;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The module cache over real NVRTC: hits, corrupt and truncated entries, compile errors. */
@Tag("gpu")
class ModuleCacheGpuTest {
    @TempDir
    Path dir;

    static void checkRuns(CudaDevice dev, CudaModule m) {
        int n = 4099;
        float[] x0 = new float[n];
        SplittableRandom r = new SplittableRandom(System.nanoTime());
        for (int i = 0; i < n; i++) {
            x0[i] = (float) r.nextGaussian() * 100f;
        }
        CudaStream s = dev.newStream(false);
        try (CudaStorage x = dev.allocate(4L * n); CudaStorage y = dev.allocate(4L * n)) {
            Gpu.upload(s, x0, x);
            s.memset32(y, 0, Float.floatToRawIntBits(Float.NaN), n);
            m.kernel("to_bf16_and_back").launch(s, new int[] {Gpu.blocks(n, 128)}, new int[] {128}, 0, x, y, n);
            float[] out = Gpu.download(s, y, n);
            for (int i = 0; i < n; i++) {
                float expect = bf16RoundTrip(x0[i]);
                assertEquals(expect, out[i], "at " + i + " x=" + x0[i]);
            }
        } finally {
            s.close();
        }
    }

    /** Round to nearest even at 16 bits, as __float2bfloat16_rn does for finite values. */
    static float bf16RoundTrip(float f) {
        int bits = Float.floatToRawIntBits(f);
        int rounded = bits + 0x7fff + ((bits >>> 16) & 1);
        return Float.intBitsToFloat(rounded & 0xffff0000);
    }

    @Test
    void compilesOnceThenHitsAndRecompilesCorruptOrTruncatedEntries() throws Exception {
        CudaDevice dev = Gpu.device();
        ModuleCache cache = ModuleCache.forDevice(dev, dir);
        KernelSource src = Gpu.testKernels();

        long t0 = System.nanoTime();
        ModuleCache.Entry first = cache.get(src);
        long compileMs = (System.nanoTime() - t0) / 1_000_000;
        assertFalse(first.fromDisk());
        t0 = System.nanoTime();
        ModuleCache.Entry hit = cache.get(src);
        long hitUs = (System.nanoTime() - t0) / 1_000;
        assertTrue(hit.fromDisk());
        System.out.printf("[gpu] NVRTC compile %d ms, cache hit %d us, cubin %d bytes, key %s%n", compileMs, hitUs,
                first.cubin().length, first.key());

        Path file = cache.entryPath(first.key());
        byte[] whole = Files.readAllBytes(file);

        // corrupt: flip a byte in the middle of the cubin
        byte[] corrupt = whole.clone();
        corrupt[whole.length / 2] ^= 0x01;
        Files.write(file, corrupt);
        try (CudaModule m = cache.load(dev, src)) {
            checkRuns(dev, m);
        }
        assertEquals(1, cache.discarded());
        assertEquals(2, cache.compiles());

        // truncated: half the file
        Files.write(file, Arrays.copyOf(whole, whole.length / 2));
        try (CudaModule m = cache.load(dev, src)) {
            checkRuns(dev, m);
        }
        assertEquals(2, cache.discarded());
        assertEquals(3, cache.compiles());

        // and the rewritten entry is served again
        try (CudaModule m = cache.load(dev, src)) {
            checkRuns(dev, m);
        }
        assertEquals(3, cache.compiles());
        assertEquals(2, cache.hits(), "the first hit and the last load");
    }

    @Test
    void compileErrorCarriesNvrtcLogAndTheSourceFile() throws Exception {
        ModuleCache cache = ModuleCache.forDevice(Gpu.device(), dir);
        KernelSource bad = new KernelSource("bad_kernel",
                "extern \"C\" __global__ void bad(float* x) { x[0] = undefined_name; }", List.of(), "");
        KernelCompileException e = assertThrows(KernelCompileException.class, () -> cache.get(bad));
        System.out.println("[gpu] " + e.getMessage());
        assertTrue(e.log().contains("undefined_name"), e.log());
        assertTrue(e.getMessage().contains("sm_90") || e.getMessage().contains("sm_"), e.getMessage());
        assertEquals(bad.code(), Files.readString(e.sourceFile()));
    }
}
