package dev.lantern.cuda.codegen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.lower.StrictKernels;
import dev.lantern.ir.DType;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * GRAD_KV_DQ's layout ({@link AttentionBackwardRingRenderer}): its grid, ring and flags follow from
 * the shape and the GPU's multiprocessors; the source has no atomics (strict mode's check); shapes
 * off the wgmma path are refused with a typed error.
 */
class AttentionBackwardRingTest {
    private static AttentionBackwardSpec ring(long b, long h, int group, long s, long t, boolean causal, DType dtype, boolean masked) {
        return new AttentionBackwardSpec("lt_ring", AttentionBackwardSpec.Kind.GRAD_KV_DQ, b, h, group, s, t, 128, causal, 0.125, dtype, masked);
    }

    @Test
    void theGridHoldsEveryUnitsGradKvAndDqCtasAndTheLagBetweenThem() {
        SplittableRandom r = new SplittableRandom(16);
        for (int i = 0; i < 40; i++) {
            long b = 1 + r.nextInt(20);
            int group = 1 << r.nextInt(3);
            long h = group * (1 + r.nextInt(8));
            long s = 1 + r.nextInt(1500);
            long t = 1 + r.nextInt(1500);
            boolean causal = r.nextBoolean();
            CudaTarget target = CudaTarget.H200.withSmCount(1 + r.nextInt(132));
            AttentionBackwardSpec spec = ring(b, h, group, s, t, causal, r.nextBoolean() ? DType.BF16 : DType.F16, false);
            long units = b * (h / group);
            long stride = (t + 63) / 64 + group * ((s + 63) / 64);
            int lag = AttentionBackwardRingRenderer.lag(spec, target);
            assertTrue((long) (lag - 2) * stride >= 2L * target.smCount() * AttentionBackwardRingRenderer.WAVES,
                    spec + ": the lag covers WAVES waves of two CTAs an SM");
            CudaKernelSource src = spec.render(target);
            assertEquals((units + lag) * stride, src.launch().gridX(), spec.toString());
            assertEquals(128, src.launch().blockX());
            assertEquals(units * stride, spec.ringFlags(), "one flag a working CTA");
            long slots = Math.min(2L * lag, units);
            assertEquals(slots * group * AttentionBackwardSpec.dsTilesPerHead(s, t, causal) * AttentionBackwardSpec.DS_TILE_BYTES,
                    spec.ringBytes(target));
            assertTrue(src.source().contains("constexpr int W = 1, LAG = " + lag + ", RING = " + 2 * lag + ";"), "the ring's constants");
            StrictKernels.check(src);
        }
    }

    @Test
    void theDecoderShapesRingIsAFractionOfTheChunkedBuffer() {
        AttentionBackwardSpec causal = ring(16, 32, 1, 1024, 1024, true, DType.BF16, false);
        AttentionBackwardSpec full = ring(16, 32, 1, 1024, 1024, false, DType.BF16, false);
        // 2 * (ceil(4 * 264 / 32) + 2) = 70 slots of one head's tiles: 136 causal (1.1 MB) or 256 (2.1 MB)
        assertEquals(70L * 136 * 8192, causal.ringBytes(CudaTarget.H200));
        assertEquals(70L * 256 * 8192, full.ringBytes(CudaTarget.H200));
        assertTrue(full.ringBytes(CudaTarget.H200) < 160L << 20);
    }

    @Test
    void dqTakesItsTilesThroughStagedBuffersThatFitBesideGradKv() {
        AttentionBackwardSpec spec = ring(16, 32, 1, 1024, 1024, true, DType.BF16, false);
        CudaKernelSource staged = spec.render(CudaTarget.H200);
        assertTrue(staged.source().contains("constexpr int S = " + AttentionBackwardRingRenderer.DQ_STAGES + ";"), "dq's staged body");
        assertTrue(staged.launch().dynamicSharedBytes() >= AttentionDqFromDsRenderer.stagedSharedBytes(AttentionBackwardRingRenderer.DQ_STAGES, 1));
        String key = "lantern.attention.backward.dqStages";
        try {
            System.setProperty(key, "2");
            CudaKernelSource prefetch = spec.render(CudaTarget.H200);
            assertTrue(prefetch.source().contains("uint4 nx[4];") && !prefetch.source().contains("lt_cp_wait_n<S - 2>"),
                    "two stages: DQ_DS's register prefetch");
            for (String bad : new String[] {"1", "12"}) {
                System.setProperty(key, bad);
                CodegenException e = assertThrows(CodegenException.class, () -> spec.render(CudaTarget.H200));
                assertTrue(e.getMessage().contains("dqStages"), e.getMessage());
            }
        } finally {
            System.clearProperty(key);
        }
    }

    @Test
    void shapesOffTheWgmmaPathAreTypedErrors() {
        for (AttentionBackwardSpec spec : new AttentionBackwardSpec[] {ring(1, 2, 1, 64, 64, false, DType.F32, false),
                ring(1, 2, 1, 64, 64, false, DType.BF16, true)}) {
            CodegenException e = assertThrows(CodegenException.class, () -> spec.render(CudaTarget.H200));
            assertTrue(e.getMessage().contains("wgmma kernels only"), e.getMessage());
        }
    }
}
