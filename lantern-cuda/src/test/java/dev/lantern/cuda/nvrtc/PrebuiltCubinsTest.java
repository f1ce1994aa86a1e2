package dev.lantern.cuda.nvrtc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Prebuilt cubins (a verified package's) come before the disk cache and the compiler: a registered
 * kernel loads without a compile and writes nothing to disk; another arch or one changed character
 * of source is not a match and compiles as before.
 */
class PrebuiltCubinsTest {
    @TempDir
    Path dir;

    @AfterEach
    void forget() {
        PrebuiltCubins.clear();
    }

    @Test
    void aRegisteredCubinIsUsedWithoutTheCompilerOrTheDisk() throws Exception {
        byte[] cubin = new byte[3000];
        new SplittableRandom(19).nextBytes(cubin);
        PrebuiltCubins.register("sm_90", ModuleCacheTest.SRC.code(), cubin);
        ModuleCacheTest.FakeCompiler c = new ModuleCacheTest.FakeCompiler("nvrtc 13.0");
        ModuleCache cache = new ModuleCache(dir, c, "sm_90", 13000);
        ModuleCache.Entry e = cache.get(ModuleCacheTest.SRC);
        assertArrayEquals(cubin, e.cubin());
        assertTrue(e.fromDisk());
        assertEquals(0, c.calls.get(), "the compiler was not asked");
        assertEquals(1, cache.hits());
        try (var s = Files.list(dir)) {
            assertEquals(0, s.count(), "nothing written to the disk cache");
        }
    }

    @Test
    void anotherArchOrAChangedSourceIsNotAMatch() {
        PrebuiltCubins.register("sm_80", ModuleCacheTest.SRC.code(), new byte[] {1, 2, 3});
        PrebuiltCubins.register("sm_90", ModuleCacheTest.SRC.code() + " ", new byte[] {4, 5, 6});
        ModuleCacheTest.FakeCompiler c = new ModuleCacheTest.FakeCompiler("nvrtc 13.0");
        ModuleCache.Entry e = new ModuleCache(dir, c, "sm_90", 13000).get(ModuleCacheTest.SRC);
        assertArrayEquals(ModuleCacheTest.expectedCubin(ModuleCacheTest.SRC.code()), e.cubin());
        assertEquals(1, c.calls.get());
        KernelSource wgmma = new KernelSource("w", "extern \"C\" __global__ void w() {}", List.of(), "", true);
        PrebuiltCubins.register("sm_90a", wgmma.code(), new byte[] {7});
        assertArrayEquals(new byte[] {7}, new ModuleCache(dir, c, "sm_90", 13000).get(wgmma).cubin(), "arch-specific kernels key on sm_90a");
    }
}
