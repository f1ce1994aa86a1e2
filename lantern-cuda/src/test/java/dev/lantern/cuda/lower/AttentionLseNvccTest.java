package dev.lantern.cuda.lower;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.codegen.AttentionSpec;
import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.codegen.NvccOnPath;
import dev.lantern.ir.DType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The forward attention kernels that also write the saved lse ({@link AttentionSpec#lse}): every
 * renderer (general, mma.sync, the wgmma tiles: plain, warp-specialised, two consumers with RoPE
 * inside, persistent) compiles for sm_90 with nvcc, and the lse write costs no spill where the
 * kernel without it has none (ptxas -v; the register figures are printed as {@code [lse-nvcc]}
 * lines). Skips without nvcc.
 */
@Tag("nvcc")
class AttentionLseNvccTest {
    @TempDir
    Path tmp;

    private record Case(String what, AttentionSpec spec, CudaTarget target) {}

    static List<Case> cases() {
        CudaTarget h200 = CudaTarget.H200;
        CudaTarget mma = h200.withWgmmaAttention(null);
        CudaTarget plain = h200.withWgmmaAttention(new CudaTarget.WgmmaTile(64, 2, 1, false));
        CudaTarget two = h200.withWgmmaAttention(new CudaTarget.WgmmaTile(128, 2, 1, false, 2, true, true));
        CudaTarget persistent = h200.withWgmmaAttention(CudaTarget.HOPPER_ATTENTION.asPersistent(2)).withSmCount(7);
        List<Case> all = new ArrayList<>();
        all.add(new Case("general f32 d37 causal gqa", spec(DType.F32, 37, true).withGroup(3), h200));
        all.add(new Case("general f32 d64 masked", spec(DType.F32, 64, false).withMask(), h200));
        all.add(new Case("general bf16 d128 masked (mma target)", spec(DType.BF16, 128, true).withMask(), mma));
        all.add(new Case("mma bf16 d64 causal gqa masked", spec(DType.BF16, 64, true).withGroup(3).withMask(), h200));
        all.add(new Case("mma f16 d64", spec(DType.F16, 64, false), h200));
        all.add(new Case("mma bf16 d128 causal", spec(DType.BF16, 128, true), mma));
        all.add(new Case("wgmma default bf16 d128 causal gqa", spec(DType.BF16, 128, true).withGroup(3), h200));
        all.add(new Case("wgmma default f16 d128 masked q-rope", spec(DType.F16, 128, false).withMask().withQueryRope(10000), h200));
        all.add(new Case("wgmma plain bf16 d128 causal", spec(DType.BF16, 128, true), plain));
        all.add(new Case("wgmma two consumers bf16 d128 causal rope", spec(DType.BF16, 128, true).withRope(10000), two));
        all.add(new Case("wgmma persistent bf16 d128 causal gqa", spec(DType.BF16, 128, true).withGroup(3), persistent));
        return all;
    }

    private static AttentionSpec spec(DType t, int d, boolean causal) {
        return new AttentionSpec("lt_attention", 2, 6, 97, 131, d, causal, 1 / Math.sqrt(d), t);
    }

    @Test
    void everyForwardWritingLseCompilesWithoutNewSpills() throws Exception {
        Assumptions.assumeTrue(NvccOnPath.found(), "nvcc is not on the PATH");
        StringBuilder failures = new StringBuilder();
        for (Case c : cases()) {
            int[] without = ptxas(c.spec().render(c.target()), failures);
            CudaKernelSource src = c.spec().withLse().render(c.target());
            assertTrue(src.source().contains("lse[bh * seq_q + row]"), c.what() + ": no lse store");
            assertTrue(src.params().stream().anyMatch(x -> x.name().equals("lse")), c.what() + ": no lse argument");
            int[] with = ptxas(src, failures);
            if (without != null && with != null) {
                System.out.printf("[lse-nvcc] %-45s registers %d -> %d, spill bytes %d -> %d%n", c.what(), without[0], with[0],
                        without[1], with[1]);
                if (with[1] > without[1]) {
                    failures.append(c.what()).append(": the lse write adds spills (").append(without[1]).append(" -> ")
                            .append(with[1]).append(" bytes)\n");
                }
            }
        }
        assertEquals("", failures.toString());
    }

    /** {registers, spill store + load bytes} of the kernel, or null after a failure (appended). */
    private int[] ptxas(CudaKernelSource src, StringBuilder failures) throws Exception {
        NvccOnPath.Ptxas px = NvccOnPath.ptxas(src, CudaTarget.H200, Files.createTempDirectory(tmp, "k"), 300);
        if (!px.failure().isEmpty()) {
            failures.append(px.failure());
            return null;
        }
        assertTrue(px.registers() >= 0 && px.spillStores() >= 0, px.log());
        return new int[] {px.registers(), px.spillBytes()};
    }
}
