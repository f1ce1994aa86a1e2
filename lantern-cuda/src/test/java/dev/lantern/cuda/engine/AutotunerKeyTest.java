package dev.lantern.cuda.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.lower.CudaLoweringTest;
import dev.lantern.cuda.lower.Step;
import dev.lantern.frontend.nn.BlockConfig;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The tune-cache keys of GEMMs: one choice per spec and use of C. */
class AutotunerKeyTest {
    @Test
    void aGemmThatReadsCIsTunedApartFromTheSameSpecWithout() {
        GemmSpec spec = GemmSpec.of(16384, 4096, 4096, GemmSpec.DataType.BF16, GemmSpec.DataType.BF16);
        String plain = Autotuner.useKey(new Step.GemmUse(spec, false), "NVIDIA H200");
        String withC = Autotuner.useKey(new Step.GemmUse(spec, true), "NVIDIA H200");
        assertEquals("gemm2.16384x4096x4096b1NN.BF16.BF16.NONE.NVIDIA_H200", plain, "the key a cache without C keeps");
        assertEquals(plain + ".c", withC);
        assertNotEquals(plain, withC);
    }

    @Test
    void theDecoderTunesFourGemmUses() {
        // q, k, v share one use; the o projection (+C), the up (GELU) and the down projection (+C) are their own
        List<Step.Gemm> g = CudaLoweringTest.gemms(CudaLoweringTest.lower(BlockConfig.named("decoder"), true));
        Set<Step.GemmUse> uses = g.stream().map(Step.Gemm::use).collect(Collectors.toSet());
        assertEquals(4, uses.size());
        assertEquals(Set.of(false, true), uses.stream().map(Step.GemmUse::withC).collect(Collectors.toSet()));
    }
}
