package dev.lantern.cuda.lower;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.codegen.GatherSpec;
import dev.lantern.cuda.codegen.NvccOnPath;
import dev.lantern.cuda.codegen.StridedCopySpec;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.ir.IrParser;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * slice, concat and gather on CUDA (what the GPT-2, BERT and LLaMA graphs need): at odd sizes they
 * lower to strided copies at pointer offsets and one gather kernel, within the launch contract;
 * the offsets and extents are the ones the layouts give; with nvcc on the PATH every such kernel
 * compiles for sm_90 (the nvcc tier; without nvcc that part is reported, not skipped silently).
 */
class MovementLoweringTest {
    @TempDir
    Path tmp;

    static final String GRAPH = """
            graph @movement {
              %ids = input {name="ids"} : i64[3,7]
              %table = param {name="table"} : bf16[37,24]
              %e = gather(%table, %ids) {axis=0} : bf16[3,7,24]
              %a = slice(%e) {axis=2, start=5, end=13} : bf16[3,7,8]
              %b = slice(%e) {axis=1, start=2, end=7} : bf16[3,5,24]
              %w = param {name="w"} : bf16[24,8]
              %bw = matmul(%b, %w) : bf16[3,5,8]
              %c = concat(%a, %bw) {axis=1} : bf16[3,12,8]
              %d = add(%c, %c) : bf16[3,12,8]
              return %d
            }
            """;

    static CudaLowering.Lowered lower(boolean fuse) {
        CompiledModel m = Compiler.compile(IrParser.parse(GRAPH), CompileOptions.defaults().withTarget("cuda").withFuse(fuse));
        return CudaLowering.lower(m, CudaTarget.H200);
    }

    @Test
    void sliceConcatAndGatherLowerToCopiesAtOffsetsAndOneGather() {
        for (boolean fuse : new boolean[] {true, false}) {
            CudaLowering.Lowered l = lower(fuse); // runs the launch contract
            List<Step.Launch> launches = l.steps().stream().filter(s -> s instanceof Step.Launch).map(s -> (Step.Launch) s).toList();
            Step.Launch gather = launches.stream().filter(x -> x.spec() instanceof GatherSpec).findFirst().orElseThrow();
            GatherSpec g = (GatherSpec) gather.spec();
            assertEquals(List.of(1L, 21L, 37L, 24L), List.of(g.outer(), g.count(), g.rows(), g.inner()));
            List<Step.Launch> copies = launches.stream().filter(x -> x.spec() instanceof StridedCopySpec).toList();
            // two slices and the concat's two inputs
            assertEquals(4, copies.size(), "copies: " + copies);
            Map<String, Long> offsets = new LinkedHashMap<>();
            for (Step.Launch c : copies) {
                String name = c.source().entry().substring(0, c.source().entry().lastIndexOf('_'));
                Step.Ptr in = (Step.Ptr) c.args().get(0);
                Step.Ptr out = (Step.Ptr) c.args().get(1);
                offsets.merge(name + (name.equals("lt_slice") ? ":in" : ":out"), name.equals("lt_slice") ? in.offset() : out.offset(), Long::sum);
                assertTrue(in.offset() + in.extent() <= in.buf().bytes() && out.offset() + out.extent() <= out.buf().bytes(), c.toString());
            }
            // slice starts: 5 elements along the last axis (10 B) + 2 rows of 24 (96 B); the concat's second input after the first's 7 rows of 8 (112 B)
            assertEquals(10L + 96L, offsets.get("lt_slice:in"));
            assertEquals(112L, offsets.get("lt_concat:out"));
        }
    }

    @Test
    void theNewKernelsCompileForSm90() throws Exception {
        if (!NvccOnPath.found()) {
            System.out.println("[nvcc] not on the PATH: the slice/concat/gather kernels were not compiled (install the CUDA toolkit)");
            return;
        }
        Map<String, CudaKernelSource> unique = new LinkedHashMap<>();
        for (boolean fuse : new boolean[] {true, false}) {
            for (Step s : lower(fuse).steps()) {
                if (s instanceof Step.Launch l && (l.spec() instanceof GatherSpec || l.spec() instanceof StridedCopySpec)) {
                    unique.putIfAbsent(l.source().entry(), l.source());
                }
            }
        }
        List<String> failures = new ArrayList<>();
        for (CudaKernelSource src : unique.values()) {
            Path cu = tmp.resolve(src.entry() + ".cu");
            Files.writeString(cu, src.source());
            Process p = new ProcessBuilder("nvcc", NvccOnPath.archFlag(src, CudaTarget.H200), "-cubin", "-O3", "-std=c++17",
                    "-o", tmp.resolve(src.entry() + ".cubin").toString(), cu.toString()).redirectErrorStream(true).start();
            String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(120, TimeUnit.SECONDS), "nvcc timed out");
            if (p.exitValue() != 0) {
                failures.add(src.entry() + ":\n" + log);
            }
        }
        assertEquals(List.of(), failures);
        assertTrue(unique.size() >= 3, "kernels: " + unique.keySet());
    }
}
