package dev.lantern.cuda.engine;

import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.codegen.LaunchConfig;
import dev.lantern.cuda.lower.CudaLowering;
import dev.lantern.cuda.lower.Step;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.Operand;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link KernelFigures} on a decoder block lowered for the H200 without a GPU: the occupancy API is
 * a stand-in and the step times seeded random, so everything but the two device queries is checked
 * here: the occupancy formula, the grid limit, the cost-model bytes, GB/s in float64, the summary.
 */
class KernelFiguresTest {
    @Test
    void occupancyCountsWholeWarpsAgainstTheSmsThreadSlots() {
        assertEquals(100.0, KernelFigures.occupancyPct(8, 256, 2048), 1e-12);
        assertEquals(9.375, KernelFigures.occupancyPct(3, 48, 2048), 1e-12, "48 threads hold 2 warps: 3 x 64 of 2048");
        assertEquals(50.0, KernelFigures.occupancyPct(1, 1024, 2048), 1e-12);
        assertEquals(100.0, KernelFigures.occupancyPct(64, 64, 2048), 1e-12, "capped at 100");
        assertEquals(0.0, KernelFigures.occupancyPct(0, 128, 2048), 0.0, "a launch that cannot be resident");
        assertEquals(3.35, KernelFigures.gbps(3_350_000_000L, 1000.0), 1e-12);
        assertTrue(Double.isNaN(KernelFigures.gbps(100, 0)));
    }

    @Test
    void aLoweredBlocksFiguresFollowItsStepsAndTheCostModel() {
        CompiledModel m = Compiler.compile(TransformerBlock.build(BlockConfig.named("decoder-small"), DType.BF16).graph(),
                CompileOptions.defaults().withTarget("cuda"));
        List<Step> steps = CudaLowering.lower(m, CudaTarget.H200).steps();
        SplittableRandom rnd = new SplittableRandom(18);
        List<CudaSession.StepTime> times = new ArrayList<>();
        for (Step s : steps) {
            times.add(new CudaSession.StepTime("step of kernel " + s.kernel(), 0.001 + rnd.nextDouble() * 0.05));
        }
        // stand-in for cuOccupancyMaxActiveBlocksPerMultiprocessor: the thread limit alone, at most 32 blocks
        List<KernelFigures.Figure> figs = KernelFigures.of(steps, m.kernels(), times,
                l -> Math.min(32, 2048 / l.source().launch().threads()), 2048, CudaTarget.H200.smCount());

        int sms = CudaTarget.H200.smCount();
        List<Integer> seenSteps = new ArrayList<>();
        long launches = 0;
        long gemms = 0;
        for (KernelFigures.Figure f : figs) {
            Kernel k = m.kernels().get(f.kernel());
            assertEquals(k.name(), f.name());
            long bytes = 0;
            for (Operand o : k.inputs()) {
                bytes += o.shape().numel() * o.dtype().bytes();
            }
            bytes += k.output().shape().numel() * k.output().dtype().bytes();
            for (Operand w : k.workspace()) {
                bytes += 2 * w.shape().numel() * w.dtype().bytes();
            }
            assertEquals(bytes, f.bytes(), "cost-model bytes of " + k.name());
            double ms = 0;
            for (KernelFigures.Launch l : f.launches()) {
                seenSteps.add(l.step());
                ms += times.get(l.step()).ms();
                assertEquals(f.kernel(), steps.get(l.step()).kernel());
                if (steps.get(l.step()) instanceof Step.Launch launch) {
                    launches++;
                    LaunchConfig c = launch.source().launch();
                    assertNotNull(l.shape());
                    int perSm = Math.min(32, 2048 / c.threads());
                    assertEquals(perSm, l.blocksPerSm());
                    assertEquals(Math.min(100.0, 100.0 * perSm * ((c.threads() + 31) / 32 * 32) / 2048.0), l.occupancyPct(), 1e-9);
                    long blocks = c.gridX() * c.gridY() * c.gridZ();
                    int reachable = (int) Math.min(perSm, (blocks + sms - 1) / sms);
                    assertEquals(KernelFigures.occupancyPct(reachable, c.threads(), 2048), l.gridOccupancyPct(), 1e-9);
                    assertTrue(l.gridOccupancyPct() <= l.occupancyPct());
                    assertEquals((double) blocks / ((double) perSm * sms), l.waves(), 1e-12);
                } else {
                    gemms++;
                    assertNull(l.shape(), "cuBLASLt picks its own launch");
                    assertTrue(Double.isNaN(l.occupancyPct()));
                }
            }
            assertEquals(ms, f.ms(), 1e-12);
            assertEquals(bytes / (ms / 1e3) / 1e9, f.dramGbps(), 1e-9 * f.dramGbps());
        }
        assertTrue(launches > 3 && gemms > 1, launches + " launches, " + gemms + " GEMMs");
        assertEquals(steps.size(), seenSteps.size(), "every step in exactly one kernel");
        assertEquals(steps.size(), seenSteps.stream().distinct().count());

        KernelFigures.Summary sum = KernelFigures.summary(figs);
        double occTime = 0;
        double launchMs = 0;
        for (KernelFigures.Figure f : figs) {
            for (KernelFigures.Launch l : f.launches()) {
                if (l.shape() != null) {
                    occTime += l.occupancyPct() * l.ms();
                    launchMs += l.ms();
                }
            }
        }
        assertEquals(occTime / launchMs, sum.occPct(), 1e-9);
        long allBytes = figs.stream().mapToLong(KernelFigures.Figure::bytes).sum();
        double allMs = times.stream().mapToDouble(CudaSession.StepTime::ms).sum();
        assertEquals(allBytes / (allMs / 1e3) / 1e9, sum.dramGbps(), 1e-9 * sum.dramGbps());
    }

    @Test
    void mismatchedStepTimesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> KernelFigures.of(List.of(), List.of(),
                List.of(new CudaSession.StepTime("x", 1)), l -> 1, 2048, 132));
    }
}
