package dev.lantern.cuda.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.frontend.nn.BlockConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import dev.lantern.cuda.NvccOnPath;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Lowers the decoder and encoder blocks of every benchmark config (fused and eager) and compiles
 * every generated kernel for sm_90 with nvcc. Sources are content-named, so identical kernels
 * are compiled once. Skips without nvcc.
 */
@Tag("nvcc")
class CudaLoweringNvccTest {
    @TempDir
    Path tmp;

    @Test
    void everyLoweredKernelCompilesForSm90() throws Exception {
        Assumptions.assumeTrue(NvccOnPath.found(), "nvcc is not on the PATH");
        Map<String, CudaKernelSource> unique = new TreeMap<>();
        List<BlockConfig> configs = new ArrayList<>(BlockConfig.ALL);
        configs.add(new BlockConfig("odd", 1, 77, 96, 3, 200, true));
        configs.add(new BlockConfig("odd-enc", 2, 33, 120, 4, 250, false));
        for (BlockConfig c : configs) {
            for (boolean fuse : new boolean[]{true, false}) {
                for (Step s : CudaLoweringTest.lower(c, fuse).steps()) {
                    if (s instanceof Step.Launch l) {
                        CudaKernelSource prev = unique.putIfAbsent(l.source().entry(), l.source());
                        assertTrue(prev == null || prev.source().equals(l.source().source()), "one name, two sources: " + l.source().entry());
                    }
                }
            }
        }
        assertTrue(unique.size() >= 10, "kernels: " + unique.keySet());
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<String>> results = new ArrayList<>();
            for (CudaKernelSource src : unique.values()) {
                results.add(pool.submit(() -> compile(src)));
            }
            for (Future<String> f : results) {
                String failure = f.get(120, TimeUnit.SECONDS);
                assertEquals("", failure);
            }
        } finally {
            pool.shutdownNow();
        }
        System.out.println("[nvcc] " + unique.size() + " distinct lowered kernels compile for " + CudaTarget.H200.arch());
    }

    private String compile(CudaKernelSource src) throws Exception {
        Path cu = tmp.resolve(src.entry() + ".cu");
        Files.writeString(cu, src.source());
        List<String> cmd = List.of("nvcc", dev.lantern.cuda.NvccOnPath.archFlag(src, CudaTarget.H200), "-cubin", "-O3", "-std=c++17",
                "-o", tmp.resolve(src.entry() + ".cubin").toString(), cu.toString());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return src.entry() + ": nvcc timed out";
        }
        return p.exitValue() == 0 ? "" : src.entry() + ":\n" + log + "\nreproduce: " + String.join(" ", cmd);
    }
}
