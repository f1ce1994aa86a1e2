package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.lantern.cuda.codegen.NvccOnPath;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The gpu tier's kernels compile for sm_90 with nvcc, so a GPU run never fails on a typo. */
@Tag("nvcc")
class TestKernelsNvccTest {
    @TempDir
    Path tmp;

    @Test
    void testKernelsCompileForSm90() throws Exception {
        assumeTrue(NvccOnPath.found(), "nvcc not on PATH");
        Path src = tmp.resolve("test_kernels.cu");
        Files.writeString(src, Gpu.kernelSource());
        Path cubin = tmp.resolve("test_kernels.cubin");
        Process p = new ProcessBuilder("nvcc", "-arch=sm_90", "-std=c++17", "-cubin", "-o", cubin.toString(),
                src.toString()).redirectErrorStream(true).start();
        String log = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "nvcc timed out");
        assertEquals(0, p.exitValue(), log);
        assertTrue(Files.size(cubin) > 1000, "a cubin was written");
    }
}
