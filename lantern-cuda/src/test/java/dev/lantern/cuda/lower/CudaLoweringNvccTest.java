package dev.lantern.cuda.lower;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.engine.Autotuner;
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
import dev.lantern.cuda.codegen.NvccOnPath;
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

    /**
     * Every attention variant the autotuner may pick for the decoder's and encoder's attention
     * (wgmma tiles for sm_90a, mma.sync tiles for sm_90) compiles without register spills: a
     * variant is only ever built on the GPU when it is timed, so this is where a broken one shows.
     */
    @Test
    void everyAutotunerAttentionVariantCompilesWithoutSpills() throws Exception {
        Assumptions.assumeTrue(NvccOnPath.found(), "nvcc is not on the PATH");
        Map<String, CudaKernelSource> unique = new TreeMap<>();
        List<String> refused = new ArrayList<>();
        for (String block : List.of("decoder", "encoder")) {
            for (Step s : CudaLoweringTest.lower(BlockConfig.named(block), true).steps()) {
                if (s instanceof Step.Launch l && l.spec() instanceof dev.lantern.cuda.codegen.AttentionSpec a) {
                    for (var v : Autotuner.attentionVariants(CudaTarget.H200).entrySet()) {
                        var w = v.getValue().wgmmaAttention();
                        try {
                            CudaKernelSource src = KernelNames.render(a, v.getValue());
                            unique.put(src.entry() + "_" + v.getKey(), src);
                        } catch (dev.lantern.cuda.codegen.CodegenException e) {
                            // a tile the renderer refuses for this spec is never timed: the mma.sync tile
                            // that would spill at head_dim 128, and (the decoder's q-rope spec) the tiles
                            // that cannot rotate q
                            boolean expected = v.getKey().equals("w4m2k32s2")
                                    || a.fusedRope() && (w == null || !w.rotatesQueries());
                            assertTrue(expected, block + " refused " + v.getKey() + ": " + e.getMessage());
                            refused.add(block + ":" + v.getKey());
                        }
                        if (w != null && w.fusesRope()) { // and with RoPE inside, on the tiles that rotate
                            CudaKernelSource src = KernelNames.render(a.withRope(10000), v.getValue());
                            unique.put(src.entry() + "_" + v.getKey() + "r", src);
                        }
                        if (w != null && w.rotatesQueries()) {
                            CudaKernelSource src = KernelNames.render(a.withQueryRope(10000), v.getValue());
                            unique.put(src.entry() + "_" + v.getKey() + "rq", src);
                        }
                    }
                }
            }
        }
        assertTrue(unique.size() >= 2 * 10, "variants: " + unique.keySet());
        assertTrue(refused.contains("encoder:w4m2k32s2") && refused.size() <= 8, "refused: " + refused);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<String>> results = new ArrayList<>();
            for (var en : unique.entrySet()) {
                results.add(pool.submit(() -> compile(en.getKey(), en.getValue(), true)));
            }
            for (Future<String> f : results) {
                assertEquals("", f.get(120, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
        }
        System.out.println("[nvcc] " + unique.size() + " autotuner attention variants compile without spills; refused: " + refused);
    }

    private String compile(CudaKernelSource src) throws Exception {
        return compile(src.entry(), src, false);
    }

    private String compile(String name, CudaKernelSource src, boolean noSpills) throws Exception {
        Path cu = tmp.resolve(name + ".cu");
        Files.writeString(cu, src.source());
        List<String> cmd = new ArrayList<>(List.of("nvcc", dev.lantern.cuda.codegen.NvccOnPath.archFlag(src, CudaTarget.H200), "-cubin", "-O3",
                "-std=c++17", "-o", tmp.resolve(name + ".cubin").toString(), cu.toString()));
        if (noSpills) {
            cmd.add("-Xptxas=-v");
        }
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return src.entry() + ": nvcc timed out";
        }
        if (p.exitValue() != 0) {
            return name + ":\n" + log + "\nreproduce: " + String.join(" ", cmd);
        }
        if (noSpills && log.lines().anyMatch(l -> l.matches(".*[1-9][0-9]* bytes spill (stores|loads).*"))) {
            return name + ": spills registers:\n" + log;
        }
        return "";
    }
}
