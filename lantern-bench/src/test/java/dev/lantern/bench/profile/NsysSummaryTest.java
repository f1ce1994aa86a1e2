package dev.lantern.bench.profile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class NsysSummaryTest {
    static String fixture(String name) {
        try (InputStream in = NsysSummaryTest.class.getResourceAsStream("/profile/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void kernelSummaryInNanosecondsBecomesMicroseconds() {
        List<NsysSummary.Entry> k = NsysSummary.kernels("kern_sum.csv", fixture("kern_sum.csv"));
        assertEquals(5, k.size(), "the progress line before the header is skipped");
        assertEquals("nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NTN", k.getFirst().name());
        assertEquals(10, k.getFirst().calls());
        assertEquals(24_000, k.getFirst().totalUs(), 1e-9);
        assertEquals(2_400, k.getFirst().meanUs(), 1e-9);
        NsysSummary.Entry cutlass = k.get(2);
        assertEquals("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_tn_align8>(T1::Params)", cutlass.name());
        assertEquals(20, cutlass.calls());
        assertEquals(582.5, cutlass.meanUs(), 1e-9);
        assertEquals("void lt_gemm_epilogue<128, 64>(float *, const __nv_bfloat16 *, int, int)", k.get(4).name(),
                "a quoted name with commas inside template and parameter brackets is one field");
    }

    @Test
    void theUnitIsReadFromTheHeader() {
        List<NsysSummary.Entry> k = NsysSummary.kernels("kern_sum_us.csv", fixture("kern_sum_us.csv"));
        assertEquals("lt_k1_gelu, fused", k.getFirst().name());
        assertEquals(3000.5, k.getFirst().totalUs(), 1e-9, "(us) is not scaled as ns");
        assertEquals(3, k.getFirst().calls());
    }

    @Test
    void memorySummarySeparatesCopiesFromSets() {
        List<NsysSummary.Entry> m = NsysSummary.memoryOps("mem_time_sum.csv", fixture("mem_time_sum.csv"));
        assertEquals(3, m.size());
        assertEquals(12_000, m.getFirst().totalUs(), 1e-9);
        assertTrue(NsysSummary.isMemcpy(m.get(0).name()));
        assertTrue(NsysSummary.isMemcpy(m.get(1).name()));
        assertFalse(NsysSummary.isMemcpy(m.get(2).name()));
        assertTrue(NsysSummary.isMemcpy("[CUDA memcpy HtoD]"), "older nsys spelling");
    }

    @Test
    void badInputIsATypedError() {
        ProfileFormatException noName = assertThrows(ProfileFormatException.class,
                () -> NsysSummary.kernels("k.csv", "Time (%),Total Time (ns),Instances\n1,2,3\n"));
        assertTrue(noName.getMessage().contains("no header row"), noName.getMessage());
        ProfileFormatException notNumber = assertThrows(ProfileFormatException.class,
                () -> NsysSummary.kernels("k.csv", "Total Time (ns),Instances,Name\n12x,1,lt_k0\n"));
        assertTrue(notNumber.getMessage().contains("line 2") && notNumber.getMessage().contains("12x"), notNumber.getMessage());
        assertThrows(ProfileFormatException.class, () -> NsysSummary.kernels("k.csv", "Total Time (ns),Instances,Name\n12,1,\"lt_k0\n"),
                "an unterminated quote");
        assertThrows(ProfileFormatException.class, () -> NsysSummary.kernels("k.csv", "Total Time (ns),Instances,Name\n12,1,lt_k0,extra\n"),
                "a row wider than the header");
        assertThrows(ProfileFormatException.class, () -> NsysSummary.kernels("k.csv", "Total Time (fortnights),Instances,Name\n12,1,lt_k0\n"),
                "an unknown unit");
        assertThrows(ProfileFormatException.class, () -> NsysSummary.kernels("k.csv", "Total Time (ns),Instances,Name\n12,1.5,lt_k0\n"),
                "a fractional count");
        assertThrows(ProfileFormatException.class, () -> NsysSummary.kernels("k.csv", ""), "empty");
    }

    @Test
    void kernelNamesLoseReturnTypeAndParameters() {
        assertEquals("lt_gemm_epilogue<128, 64>", KernelNames.display("void lt_gemm_epilogue<128, 64>(float *, const __nv_bfloat16 *, int, int)"));
        assertEquals("lt_gemm_epilogue", KernelNames.base("void lt_gemm_epilogue<128, 64>(float *, const __nv_bfloat16 *, int, int)"));
        assertEquals("ns::k<(int)3>", KernelNames.display("void ns::k<(int)3>(ns::P<float, 2>)"));
        assertEquals("lt_k0_copy", KernelNames.display("lt_k0_copy"));
        assertEquals("nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NTN", KernelNames.base("nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NTN"));
    }
}
