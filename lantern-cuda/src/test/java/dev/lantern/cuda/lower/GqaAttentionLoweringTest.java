package dev.lantern.cuda.lower;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.codegen.AttentionSpec;
import dev.lantern.cuda.codegen.CodegenException;
import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.codegen.NvccOnPath;
import dev.lantern.cuda.engine.Autotuner;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.ir.DType;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.Op;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Grouped-query attention lowered for the H200: the K/V head repeat is gone, the one attention
 * kernel reads k and v with their hk heads (pointer extents of hk heads, the spec's group
 * h / hk), the launch contract holds, and every generated source (and every autotuner variant of
 * the attention) compiles for sm_90 / sm_90a with nvcc, without register spills.
 */
class GqaAttentionLoweringTest {
    @TempDir
    Path tmp;

    static Stream<GqaGraphs.Case> cases() {
        return Stream.of(
                new GqaGraphs.Case("bf16", 2, 6, 2, 37, 37, 64, true, true, "concat"),      // mma.sync path
                new GqaGraphs.Case("bf16", 2, 4, 1, 37, 37, 128, true, true, "gather"),     // wgmma path, rope
                new GqaGraphs.Case("bf16", 1, 8, 2, 200, 333, 128, false, false, "gather"), // wgmma, ragged key tile
                new GqaGraphs.Case("bf16", 2, 6, 3, 37, 29, 24, false, false, "concat"),    // general path
                new GqaGraphs.Case("f32", 2, 6, 2, 37, 37, 64, true, false, "concat"),      // f32: general path
                // an additive mask (BERT's (b,1,1,t) key padding; a full (b,1,s,t) one) on each path
                new GqaGraphs.Case("bf16", 2, 4, 4, 37, 37, 64, false, false, "concat", "1,1"),
                new GqaGraphs.Case("bf16", 2, 4, 2, 37, 45, 128, true, false, "gather", "1,s"),
                new GqaGraphs.Case("bf16", 1, 4, 4, 20, 20, 128, false, true, "concat", "1,1"),
                new GqaGraphs.Case("f32", 2, 6, 3, 37, 29, 24, false, false, "concat", "1,s"));
    }

    static CompiledModel compile(GqaGraphs.Case c) {
        return Compiler.compile(IrParser.parse(c.ir()), CompileOptions.defaults().withTarget("cuda"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void oneAttentionKernelReadsTheKvHeadsInPlace(GqaGraphs.Case c) {
        CompiledModel m = compile(c);
        assertFalse(m.graph().nodes().stream().anyMatch(n -> n.op() == Op.CONCAT || n.op() == Op.GATHER),
                "no head copies left:\n" + m.graph());
        CudaLowering.Lowered l = CudaLowering.lower(m, CudaTarget.H200); // checks the launch contract
        List<Step.Launch> att = l.steps().stream()
                .filter(s -> s instanceof Step.Launch x && x.spec() instanceof AttentionSpec).map(s -> (Step.Launch) s).toList();
        assertEquals(1, att.size(), "one attention kernel");
        AttentionSpec spec = (AttentionSpec) att.getFirst().spec();
        assertEquals(c.h() / c.hk(), spec.group());
        assertEquals(!c.mask().isEmpty(), spec.masked(), "the mask goes into the attention kernel");
        if (spec.masked()) {
            String src0 = att.getFirst().source().source();
            assertTrue(src0.contains("amb[row * amask_ss + ") && src0.contains("MASK_MUL"), "the kernel adds the mask");
            List<Step.Arg> args = att.getFirst().args();
            Step.I64 sh = (Step.I64) args.get(args.size() - 2);
            assertEquals(0L, sh.v(), "the mask broadcasts over heads: stride 0");
        }
        assertEquals(c.hk(), spec.kvHeads());
        int bytes = DType.parse(c.dtype()).bytes();
        long kvBytes = (long) c.b() * c.hk() * c.t() * c.d() * bytes;
        for (int i : new int[] {1, 2}) {
            Step.Ptr p = (Step.Ptr) att.getFirst().args().get(i);
            assertTrue(p.extent() <= kvBytes, (i == 1 ? "k" : "v") + " reaches " + p.extent() + " bytes, hk heads hold " + kvBytes);
        }
        String src = att.getFirst().source().source();
        if (spec.group() > 1) {
            assertTrue(src.contains("hkv = hi / " + spec.group()), "the kernel reads K/V head h / group");
            if (att.getFirst().source().tensorMapCount() > 0) { // TMA: K and V maps over hk heads, copied at head hk32
                List<String> maps = att.getFirst().source().params().stream().map(p -> p.name()).filter(n -> n.startsWith("tm_")).toList();
                assertEquals(List.of("tm_q_64", "tm_k_128_g" + spec.group(), "tm_v_128_g" + spec.group()),
                        maps.stream().map(n -> n.replaceAll("_(k|v)_\\d+", "_$1_128")).toList(), "maps: " + maps);
                assertTrue(src.contains(", hk32, bi32,") && src.contains("hk32 = (int) hkv"), "K/V tiles copied at the K/V head");
            }
        }
        // nothing else moves K or V: attention, rope kernels, and at most a copy to contiguous q
        long others = l.steps().stream().filter(s -> s instanceof Step.Launch x && !(x.spec() instanceof AttentionSpec)
                && !(x.spec() instanceof dev.lantern.cuda.codegen.RopeSpec) && !(spec.masked() && x.spec() instanceof dev.lantern.cuda.codegen.ElementwiseSpec))
                .count(); // a masked one may scale its mask first
        assertEquals(0, others, "steps: " + l.steps().stream().map(s -> s instanceof Step.Launch x ? x.source().entry() : "gemm").toList());
    }

    @Test
    @Tag("nvcc")
    void everyGqaKernelAndAttentionVariantCompilesWithoutSpills() throws Exception {
        Assumptions.assumeTrue(NvccOnPath.found(), "nvcc is not on the PATH");
        Map<String, CudaKernelSource> unique = new TreeMap<>();
        for (GqaGraphs.Case c : cases().toList()) {
            for (Step s : CudaLowering.lower(compile(c), CudaTarget.H200).steps()) {
                if (s instanceof Step.Launch l) {
                    unique.put(l.source().entry() + "_" + Integer.toHexString(l.source().source().hashCode()), l.source());
                    if (l.spec() instanceof AttentionSpec a) {
                        for (var v : Autotuner.attentionVariants(CudaTarget.H200).entrySet()) {
                            try {
                                CudaKernelSource src = KernelNames.render(a, v.getValue());
                                unique.put(src.entry() + "_" + v.getKey() + "_" + Integer.toHexString(src.source().hashCode()), src);
                            } catch (CodegenException refused) {
                                // a tile the renderer refuses is never timed (CudaLoweringNvccTest checks which)
                            }
                            var w = v.getValue().wgmmaAttention();
                            if (w != null && w.fusesRope() && a.hopperPath(v.getValue())) {
                                CudaKernelSource src = KernelNames.render(a.withRope(10000), v.getValue());
                                unique.put(src.entry() + "_" + v.getKey() + "r", src);
                            }
                        }
                    }
                }
            }
        }
        assertTrue(unique.keySet().stream().filter(k -> k.contains("attention")).count() >= 10, "variants: " + unique.keySet());
        List<String> failures = new ArrayList<>();
        for (var e : unique.entrySet()) {
            String f = compile(e.getKey(), e.getValue());
            if (!f.isEmpty()) {
                failures.add(f);
            }
        }
        assertEquals(List.of(), failures);
        System.out.println("[nvcc] " + unique.size() + " GQA kernels and attention variants compile without spills");
    }

    private String compile(String name, CudaKernelSource src) throws Exception {
        Path cu = tmp.resolve(name + ".cu");
        Files.writeString(cu, src.source());
        List<String> cmd = List.of("nvcc", NvccOnPath.archFlag(src, CudaTarget.H200), "-cubin", "-O3", "-std=c++17",
                "-Xptxas=-v", "-o", tmp.resolve(name + ".cubin").toString(), cu.toString());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(180, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return name + ": nvcc timed out";
        }
        if (p.exitValue() != 0) {
            return name + ":\n" + log;
        }
        if (log.lines().anyMatch(x -> x.matches(".*[1-9][0-9]* bytes spill (stores|loads).*"))) {
            return name + ": spills registers:\n" + log;
        }
        return "";
    }
}
