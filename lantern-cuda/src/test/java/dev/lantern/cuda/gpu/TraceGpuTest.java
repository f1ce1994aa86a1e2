package dev.lantern.cuda.gpu;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.engine.CudaSession;
import dev.lantern.cuda.engine.KernelFigures;
import dev.lantern.frontend.Model;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.runtime.GraphPolicy;
import dev.lantern.trace.TraceEvent;
import dev.lantern.trace.TraceRecorder;
import dev.lantern.trace.Tracing;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The GPU side of issue 18 on decoder-small: a traced compiled forward has one slice per step on
 * the stream's track, named as bench names the steps, in stream order, inside the host's time of
 * that forward; a graph replay is one slice; and the kernel figures' device queries (the occupancy
 * API, threads per SM) give every launch a resident block count and an occupancy in (0, 100].
 */
@Tag("gpu")
class TraceGpuTest {
    @Test
    void tracedForwardsAndKernelFigures() {
        CudaDevice dev = Gpu.device();
        Model model = TransformerBlock.build(BlockConfig.named("decoder-small"), DType.BF16);
        try (CudaSession s = CudaSession.open(dev, model.graph(), null, CudaSession.Options.compiled().withPolicy(GraphPolicy.PREFER))) {
            s.fillInputs(18);
            s.forward();
            List<String> names = s.profileInForward(1, 3).stream().map(CudaSession.StepTime::op).toList();
            TraceRecorder rec = new TraceRecorder();
            long t0 = System.nanoTime();
            try (Tracing.Installed t = Tracing.install(rec)) {
                s.forward();
                s.forward();
                s.forwardGraph();
                s.forwardGraph();
            }
            long t1 = System.nanoTime();
            List<TraceEvent> gpu = rec.events().stream().filter(e -> rec.trackNames().get(e.tid()).startsWith("cuda stream")).toList();
            List<TraceEvent> steps = gpu.stream().filter(e -> !e.category().equals("graph")).toList();
            assertEquals(2 * names.size(), steps.size(), "a slice per step per forward");
            for (int f = 0; f < 2; f++) {
                List<TraceEvent> one = steps.subList(f * names.size(), (f + 1) * names.size());
                assertEquals(names, one.stream().map(TraceEvent::name).toList());
                for (int i = 1; i < one.size(); i++) {
                    assertTrue(one.get(i).startNanos() >= one.get(i - 1).endNanos() - 1000, "stream order");
                }
            }
            for (TraceEvent e : gpu) {
                assertTrue(e.startNanos() + rec.origin() >= t0 - 1_000_000 && e.endNanos() + rec.origin() <= t1 + 1_000_000,
                        e + " within the traced forwards (1 ms slack)");
            }
            assertEquals(2, gpu.stream().filter(e -> e.name().equals("graph forward")).count(), "a replay is one slice");
            System.out.printf("[gpu] trace: %d step slices, NVTX %s%n", steps.size(), dev.libraries().nvtx().enabled() ? "loaded" : "absent");

            List<KernelFigures.Figure> figs = s.kernelFigures(s.profileInForward(3, 20));
            int launches = 0;
            for (KernelFigures.Figure f : figs) {
                assertTrue(f.bytes() > 0 && f.ms() > 0 && Double.isFinite(f.dramGbps()), f.toString());
                for (KernelFigures.Launch l : f.launches()) {
                    if (l.shape() != null) {
                        launches++;
                        assertTrue(l.blocksPerSm() >= 1, l + ": resident on an SM");
                        assertTrue(l.occupancyPct() > 0 && l.occupancyPct() <= 100, l.toString());
                        assertTrue(l.gridOccupancyPct() <= l.occupancyPct() + 1e-9, l.toString());
                    }
                }
                System.out.printf("[gpu] %-32s %10d B %8.4f ms %8.1f GB/s%n", f.name(), f.bytes(), f.ms(), f.dramGbps());
            }
            assertTrue(launches > 0);
            KernelFigures.Summary sum = KernelFigures.summary(figs);
            System.out.printf("[gpu] occ_pct %.1f dram_gbps %.1f (threads/SM %d)%n", sum.occPct(), sum.dramGbps(), dev.maxThreadsPerSm());
            if (dev.target().ccMajor() == 9) {
                assertEquals(2048, dev.maxThreadsPerSm(), "sm_90 holds 2048 threads per SM");
            }
            assertFalse(Tracing.enabled());
        }
    }
}
