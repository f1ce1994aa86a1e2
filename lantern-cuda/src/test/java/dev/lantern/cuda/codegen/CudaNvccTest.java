package dev.lantern.cuda.codegen;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every generated kernel compiles with {@code nvcc -arch=sm_90 -cubin -O3} (no -lineinfo, as
 * NVRTC builds it), and the fast paths use no local memory: ptxas reports
 * "0 bytes spill stores, 0 bytes spill loads"; no kernel draws a compiler warning. Skips itself
 * when nvcc is not on the PATH.
 */
@Tag("nvcc")
class CudaNvccTest {
    /** Variants that must stay in registers. */
    private static final Set<String> FAST = Set.of("vector", "registers", "mma", "wgmma", "tiled");

    @TempDir
    static Path tmp;

    static Stream<KernelSpec> specs() {
        return BenchmarkKernels.all().stream();
    }

    @BeforeAll
    static void needsNvcc() {
        Assumptions.assumeTrue(NvccOnPath.found(), "nvcc is not on the PATH");
    }

    @ParameterizedTest
    @MethodSource("specs")
    void compilesForSm90WithoutSpills(KernelSpec spec) throws IOException, InterruptedException {
        CudaKernelSource src = spec.render(CudaTarget.H200);
        Path cu = tmp.resolve(src.entry() + ".cu");
        Files.writeString(cu, src.source());
        List<String> cmd = new ArrayList<>(List.of("nvcc", dev.lantern.cuda.codegen.NvccOnPath.archFlag(src, CudaTarget.H200), "-cubin", "-O3",
                "-std=c++17", "-Xptxas", "-v", "-o", tmp.resolve(src.entry() + ".cubin").toString(), cu.toString()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "nvcc timed out");
        String repro = "reproduce: " + String.join(" ", cmd);
        assertEquals(0, p.exitValue(), log + "\n" + repro);
        assertTrue(log.contains("Compiling entry function '" + src.entry() + "'"), log);
        assertTrue(!log.contains("warning"), "nvcc warnings:\n" + log + "\n" + repro);
        if (FAST.contains(src.variant())) {
            assertTrue(log.contains("0 bytes spill stores, 0 bytes spill loads"), "spills in a fast kernel:\n" + log
                    + "\n" + repro);
            assertTrue(!log.contains("bytes stack frame") || log.contains(" 0 bytes stack frame"),
                    "local memory in a fast kernel:\n" + log);
        }
        assertTrue(Files.size(tmp.resolve(src.entry() + ".cubin")) > 0);
    }
}
