package dev.lantern.cuda.lower;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.codegen.AttentionBackwardSpec;
import dev.lantern.cuda.codegen.CodegenException;
import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.codegen.NvccOnPath;
import dev.lantern.ir.DType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * attention's backward kernels ({@link AttentionBackwardSpec}: lse, delta, grad_q, grad_kv) compile
 * for sm_90 with nvcc over the dtypes, head dims (odd ones too), causal, masked and grouped
 * variants; head dims up to 128 without register spills (ptxas -v); none uses atomics (strict
 * mode's check). Skips without nvcc.
 */
@Tag("nvcc")
class AttentionBackwardNvccTest {
    @TempDir
    Path tmp;

    static List<AttentionBackwardSpec> specs() {
        List<AttentionBackwardSpec> all = new ArrayList<>();
        int i = 0;
        for (AttentionBackwardSpec.Kind kind : AttentionBackwardSpec.Kind.values()) {
            for (DType t : new DType[] {DType.F32, DType.BF16, DType.F16}) {
                for (int d : new int[] {37, 64, 128}) {
                    boolean variant = i++ % 2 == 0; // causal + mask + groups on every other one
                    all.add(new AttentionBackwardSpec("lt_attn_bwd_" + i, kind, 2, 6, variant ? 3 : 1, 97, 131, d, variant,
                            1 / Math.sqrt(d), t, variant));
                }
            }
        }
        return all;
    }

    @Test
    void everyKernelCompilesForSm90WithoutSpills() throws Exception {
        Assumptions.assumeTrue(NvccOnPath.found(), "nvcc is not on the PATH");
        StringBuilder failures = new StringBuilder();
        for (AttentionBackwardSpec spec : specs()) {
            CudaKernelSource src = spec.render(CudaTarget.H200);
            StrictKernels.check(src);
            Path cu = tmp.resolve(src.entry() + ".cu");
            Files.writeString(cu, src.source());
            List<String> cmd = List.of("nvcc", NvccOnPath.archFlag(src, CudaTarget.H200), "-cubin", "-O3", "-std=c++17", "-Xptxas", "-v",
                    "-o", tmp.resolve(src.entry() + ".cubin").toString(), cu.toString());
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String log = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertTrue(p.waitFor(180, TimeUnit.SECONDS), "nvcc timed out on " + src.entry());
            if (p.exitValue() != 0) {
                failures.append(src.entry()).append(":\n").append(log).append("\nreproduce: ").append(String.join(" ", cmd)).append('\n');
            } else if (!log.contains("0 bytes spill stores, 0 bytes spill loads")) {
                failures.append(spec).append(" spills:\n").append(log).append('\n');
            }
        }
        assertEquals("", failures.toString());
        System.out.println("[nvcc] " + specs().size() + " attention backward kernels compile for sm_90 without spills");
    }

    @Test
    void impossibleShapesAreTypedErrors() {
        assertThrows(CodegenException.class, () -> new AttentionBackwardSpec("lt_x", AttentionBackwardSpec.Kind.GRAD_Q, 1, 6, 4,
                7, 7, 64, false, 0.1, DType.BF16, false));
        assertThrows(CodegenException.class, () -> new AttentionBackwardSpec("lt_x", AttentionBackwardSpec.Kind.GRAD_KV, 1, 2, 1,
                0, 7, 64, false, 0.1, DType.BF16, false));
        assertThrows(CodegenException.class, () -> new AttentionBackwardSpec("lt_x", AttentionBackwardSpec.Kind.LSE, 1, 2, 1,
                7, 7, 2048, false, 0.1, DType.F32, false));
        assertThrows(CodegenException.class, () -> new AttentionBackwardSpec("lt_x", AttentionBackwardSpec.Kind.LSE, 1, 2, 1,
                7, 7, 64, false, Double.NaN, DType.F32, false));
    }
}
