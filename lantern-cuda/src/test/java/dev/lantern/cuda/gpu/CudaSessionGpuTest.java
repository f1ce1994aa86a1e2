package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.engine.CudaDemo;
import dev.lantern.cuda.engine.CudaSession;
import dev.lantern.engine.DemoMetrics;
import dev.lantern.frontend.Model;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.kernel.Kernel;
import dev.lantern.reference.RefTensor;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.runtime.GraphPolicy;
import dev.lantern.tensor.Tensor;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The compiled forward on the GPU against the float64 reference: small bf16 decoder and
 * encoder blocks (odd shapes that take the general kernels, head_dim 128 that takes the wgmma
 * attention on Hopper), every lowered kernel checked
 * on its own (run up to it, compare its output with the reference interpreter on the compiled
 * graph), the whole block within 2e-2, graph replay equal to the launches, eager within bf16
 * tolerance. Buffers are poisoned (NaN) before each run; fresh seed per run, printed.
 */
@Tag("gpu")
@Order(50)
class CudaSessionGpuTest {
    static Stream<BlockConfig> configs() {
        return Stream.of(BlockConfig.named("cpu-small"), BlockConfig.named("encoder-small"),
                new BlockConfig("odd", 1, 77, 96, 3, 200, true), new BlockConfig("odd-enc", 2, 33, 120, 4, 250, false),
                // head_dim 128: the Hopper (wgmma) attention, one with a ragged last key tile
                new BlockConfig("d128-dec", 1, 200, 512, 4, 1024, true), new BlockConfig("d128-enc", 2, 128, 256, 2, 512, false));
    }

    private static double relErr(Tensor out, double[] ref) {
        double[] o = out.toDoubles();
        for (double v : o) {
            assertTrue(Double.isFinite(v), "NaN/Inf in the output: an element was not written");
        }
        return DemoMetrics.relErr(o, ref);
    }

    @ParameterizedTest
    @MethodSource("configs")
    void everyKernelAndTheBlockMatchTheReference(BlockConfig cfg) {
        CudaDevice dev = Gpu.device();
        long seed = System.nanoTime();
        Model model = TransformerBlock.build(cfg, DType.BF16);
        Map<String, Tensor> params = model.parameters(seed);
        Map<String, Tensor> inputs = DemoMetrics.inputs(model.graph(), seed);
        Map<String, Tensor> all = new LinkedHashMap<>(params);
        all.putAll(inputs);
        String out = model.graph().outputs().getFirst();
        double[] ref = ReferenceInterpreter.run(model.graph(), all).get(out).data();
        try (CudaSession s = CudaSession.open(dev, model.graph(), params, CudaSession.Options.compiled().withPolicy(GraphPolicy.REQUIRE))) {
            s.setInputs(inputs);
            // each kernel on its own, against the reference of the compiled (fused) graph
            Map<String, RefTensor> refAll = ReferenceInterpreter.runAll(s.model().graph(), all);
            for (Kernel k : s.model().kernels()) {
                s.poison();
                Tensor got = s.runUntil(k.index());
                double e = relErr(got, refAll.get(k.output().value()).data());
                System.out.printf("[gpu] %s seed=%d %-40s rel_err=%.2e%n", cfg.name(), seed, k.name(), e);
                assertTrue(e <= 1e-2, cfg.name() + " seed " + seed + ": kernel " + k.name() + " rel err " + e);
            }
            s.poison();
            s.forward();
            Tensor compiled = s.output();
            double e = relErr(compiled, ref);
            System.out.printf("[gpu] %s seed=%d block compiled rel_err=%.2e (%d kernels, %d device ops)%n", cfg.name(), seed, e,
                    s.model().kernels().size(), s.deviceOps());
            assertTrue(e <= 2e-2, cfg.name() + " seed " + seed + ": block rel err " + e);
            s.poison();
            s.forwardGraph(); // capture (REQUIRE: a failure throws) ...
            s.poison();
            s.forwardGraph(); // ... and replay
            Tensor replay = s.output();
            assertEquals(0.0, DemoMetrics.relErr(replay.toDoubles(), compiled.toDoubles()), "replay equals the launches");
            // graph_hit_pct over every forward the caller asked for: 1 plain forward, 2 replays (runUntil is not one)
            assertEquals(new dev.lantern.cuda.engine.ForwardStats(2, 0, 1), s.forwardStats());
            assertEquals(200.0 / 3, s.forwardStats().graphHitPct(), 1e-9);
            assertEquals(100.0, s.graphStats().graphHitPct(), "the runner alone sees only forwardGraph");
        }
        try (CudaSession eager = CudaSession.open(dev, model.graph(), params, CudaSession.Options.eager())) {
            eager.setInputs(inputs);
            eager.poison();
            eager.forward();
            double e = relErr(eager.output(), ref);
            System.out.printf("[gpu] %s seed=%d block eager rel_err=%.2e (%d kernels)%n", cfg.name(), seed, e,
                    eager.model().kernels().size());
            assertTrue(e <= 2e-2, cfg.name() + " seed " + seed + ": eager rel err " + e);
            // The second run reuses the allocator's cached blocks, which hold the first run's (right)
            // values: poison() must reach the activations it allocates, or an unwritten element passes.
            eager.poison();
            eager.forward();
            assertTrue(relErr(eager.output(), ref) <= 2e-2);
            assertEquals(0.0, eager.forwardStats().graphHitPct(), "an eager session never replays");
        }
    }

    @Test
    void demoFiguresOnDecoderSmall() {
        CudaDemo.Result r = CudaDemo.measure(Gpu.device(), BlockConfig.named("decoder-small"), 7, 20);
        System.out.println("[gpu] demo {" + r.jsonFields() + "}");
        assertTrue(r.relErr() <= 2e-2, "rel err " + r.relErr());
        // the graph session's every forward (10 warm-ups, 20 timed) replays; the capture counts as one
        assertEquals(100.0, r.graphHitPct(), "graph hit " + r.graphHitPct());
        assertTrue(r.compiledMs() > 0 && r.eagerMs() > 0 && r.graphMs() > 0);
    }

    @Test
    void stepProfilesAddUpToTheForward() {
        Model model = TransformerBlock.build(new BlockConfig("prof", 4, 256, 1024, 8, 4096, true), DType.BF16);
        try (CudaSession s = CudaSession.open(Gpu.device(), model.graph(), null, CudaSession.Options.compiled())) {
            s.fillInputs(11);
            double forward = s.timeMs(s::forward, 5, 21);
            double sustained = s.sustainedMs(s::forward, 50, 21);
            var in = s.profileInForward(3, 21);
            var alone = s.profile(3, 21);
            assertEquals(s.lowered().steps().size(), in.size());
            assertEquals(in.size(), alone.size());
            double sum = in.stream().mapToDouble(CudaSession.StepTime::ms).sum();
            System.out.printf("[gpu] profile: forward %.4f ms, sustained %.4f, steps in forward %.4f, alone %.4f%n", forward,
                    sustained, sum, alone.stream().mapToDouble(CudaSession.StepTime::ms).sum());
            assertTrue(in.stream().allMatch(t -> t.ms() > 0), "every step takes time");
            // events between the steps add little: the steps sum to the forward within 25 %
            assertTrue(sum > 0.75 * forward && sum < 1.25 * forward, "steps " + sum + " vs forward " + forward);
            assertTrue(sustained > 0.5 * forward && sustained < 1.5 * forward, "sustained " + sustained + " vs " + forward);
        }
    }
}
