package dev.lantern.bench.profile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class NcuSummaryTest {
    @Test
    void rawPageWithScaledUnitsAndGroupedThousands() {
        List<NcuSummary.Launch> l = NcuSummary.launches("ncu_raw.csv", NsysSummaryTest.fixture("ncu_raw.csv"));
        assertEquals(5, l.size(), "the units row is not a launch");
        NcuSummary.Launch gemm = l.getFirst();
        assertEquals(2_400, gemm.durationUs(), 1e-9, "\"2,400.00\" usecond");
        assertEquals(1_200, gemm.dramGbps(), 1e-9, "1.20 Tbyte/second");
        assertEquals(12.4, gemm.occupancyPct(), 1e-12);
        assertEquals(61.5, gemm.l2HitPct(), 1e-12);
        assertEquals(25.0, gemm.dramPct(), 1e-12);
        assertNull(l.get(3).l2HitPct(), "n/a is null");
        NcuSummary.Launch epilogue = l.get(4);
        assertEquals(163, epilogue.durationUs(), 1e-9);
        assertNull(epilogue.occupancyPct(), "an empty cell is null, never 0");
        assertNull(epilogue.dramGbps());

        List<NcuSummary.Kernel> k = NcuSummary.kernels(l);
        assertEquals(4, k.size(), "the GEMM's two launches are one kernel");
        NcuSummary.Kernel cutlass = k.get(2);
        assertEquals("cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_tn_align8>", cutlass.name());
        assertEquals(2, cutlass.launches());
        assertEquals(1_000, cutlass.meanDurationUs(), 1e-9);
        assertEquals((25.0 * 500 + 35.0 * 1500) / 2000, cutlass.occupancyPct(), 1e-9, "weighted by duration");
        assertEquals((2000.0 * 500 + 1000.0 * 1500) / 2000, cutlass.dramGbps(), 1e-9, "all bytes over all time");
        assertEquals(50.0, cutlass.l2HitPct(), 1e-9, "the launch without the figure is left out");
        assertEquals((41.67 * 500 + 20.83 * 1500) / 2000, cutlass.dramPct(), 1e-9);
        assertEquals("lt_gemm_epilogue<128, 64>", k.get(3).name());
        assertNull(k.get(3).occupancyPct());
    }

    @Test
    void detailsPageInBaseUnits() {
        List<NcuSummary.Kernel> k = NcuSummary.kernels(NcuSummary.launches("ncu_details.csv", NsysSummaryTest.fixture("ncu_details.csv")));
        assertEquals(1, k.size());
        NcuSummary.Kernel norm = k.getFirst();
        assertEquals(2, norm.launches());
        assertEquals(250, norm.meanDurationUs(), 1e-9);
        assertEquals((3800.0 * 350 + 1800.0 * 150) / 500, norm.dramGbps(), 1e-9);
        assertEquals((71.25 * 350 + 61.25 * 150) / 500, norm.occupancyPct(), 1e-9);
        assertNull(norm.l2HitPct(), "a metric not collected");
    }

    @Test
    void aMissingMetricColumnIsNullAndABadFileAnError() {
        String csv = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"msecond\"\n\"0\",\"lt_k0\",\"1.5\"\n";
        NcuSummary.Launch l = NcuSummary.launches("n.csv", csv).getFirst();
        assertEquals(1_500, l.durationUs(), 1e-9);
        assertNull(l.l2HitPct());
        assertNull(l.occupancyPct());
        assertThrows(ProfileFormatException.class, () -> NcuSummary.launches("n.csv", "\"ID\",\"Name\"\n\"0\",\"k\"\n"), "no Kernel Name");
        ProfileFormatException unit = assertThrows(ProfileFormatException.class,
                () -> NcuSummary.launches("n.csv", "\"ID\",\"Kernel Name\",\"dram__bytes.sum.per_second\"\n\"\",\"\",\"%\"\n\"0\",\"k\",\"3\"\n"));
        assertTrue(unit.getMessage().contains("not a byte rate"), unit.getMessage());
        assertThrows(ProfileFormatException.class,
                () -> NcuSummary.launches("n.csv", "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"0\",\"k\",\"fast\"\n"));
    }
}
