package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.lower.GemmSample;
import dev.lantern.cuda.nvrtc.KernelSource;
import dev.lantern.cuda.nvrtc.ModuleCache;
import dev.lantern.cuda.lower.RandomBlocks;
import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.lower.CudaLowering;
import dev.lantern.cuda.engine.CudaSession;
import dev.lantern.cuda.engine.CudaTargets;
import dev.lantern.cuda.lower.Step;
import dev.lantern.cuda.engine.TuneCache;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.Compiler;
import dev.lantern.engine.DemoMetrics;
import dev.lantern.frontend.Model;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.LanternException;
import dev.lantern.ir.Node;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.runtime.GraphPolicy;
import dev.lantern.tensor.Tensor;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 12's random block shapes on the GPU ({@link RandomBlocks}: 60 seeded bf16 decoder and
 * encoder blocks, batch 1–4, seq 1–1100, heads 1–16, head_dim 32–128, mlp 1–6000). Each config:
 * <ol>
 * <li>eager: one forward; its first and last projections recomputed on the host in float64
 *     from the operands the device read ({@link GemmSample}, 4 rows each, within 1e-2);
 * <li>compiled without autotuning, and every {@code tuneEvery}-th config also compiled with
 *     autotuning, each forward on poisoned buffers;
 * <li>small configs (≤ {@code referenceFlops}, default 2e9): eager and compiled against the
 *     float64 reference of the whole block, fed the device's own parameters and input, within
 *     2e-2 (bf16, as {@code CudaSessionGpuTest}); larger ones: compiled against eager within 2e-2.
 * </ol>
 * Parameters and the input are drawn on the device (host draws of the 40 M-parameter configs
 * cost seconds), the same in every session. A config the CUDA path cannot take must be refused
 * with a typed {@link LanternException} that names the constraint, before anything is launched
 * for it: such refusals pass and are counted by constraint in the summary line; a CUDA error
 * never passes.
 *
 * <p>Runs after the free-memory check (whose tier-wide figure would count the code this class
 * loads) and before the context-loss test, so that a fault here cannot spoil the other classes;
 * {@link #repeatedShapesHoldNoMoreMemory} is its own leak check.
 * Properties: {@code lantern.randomShapes} (count, 60), {@code lantern.randomShapes.seed} (12),
 * {@code lantern.randomShapes.tuneEvery} (3; 0 = never), {@code lantern.randomShapes.referenceFlops}.
 */
@Tag("gpu")
@Order(Integer.MAX_VALUE - 1)
class RandomShapeGpuTest {
    static final double TOLERANCE = 2e-2;
    static final double GEMM_TOLERANCE = 1e-2;
    static final int TUNE_EVERY = Integer.getInteger("lantern.randomShapes.tuneEvery", 3);
    static final double REFERENCE_FLOPS = Double.parseDouble(System.getProperty("lantern.randomShapes.referenceFlops", "2e9"));

    private static final Map<String, Integer> refusals = new TreeMap<>();
    private static final List<String> failed = new ArrayList<>();
    private static int started;
    private static int correct;
    private static int vsReference;
    private static int vsEager;
    private static int tuned;
    private static int gemmSamples;
    private static long startNanos;

    static Stream<Arguments> configs() {
        List<BlockConfig> all = RandomBlocks.configs();
        return IntStream.range(0, all.size()).mapToObj(i -> Arguments.of(Named.of(all.get(i).name(), all.get(i)), i));
    }

    /**
     * Compiles the configs' generated kernels into the kernel cache up front, on every core: the
     * sessions then load them from the cache as usual. NVRTC is most of a session's open time
     * (about 300 distinct kernels over the 60 configs), and a session compiles one at a time.
     * A config or kernel that fails here is left for its own test to report.
     */
    @BeforeAll
    static void compileTheKernelsInParallel() throws InterruptedException {
        CudaDevice dev = Gpu.device();
        ModuleCache cache = ModuleCache.forDevice(dev);
        var target = CudaTargets.of(dev);
        Set<String> seen = ConcurrentHashMap.newKeySet();
        AtomicInteger compiled = new AtomicInteger();
        AtomicInteger failures = new AtomicInteger();
        long t0 = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, Runtime.getRuntime().availableProcessors() - 1));
        try {
            for (BlockConfig cfg : RandomBlocks.configs()) {
                pool.submit(() -> {
                    Graph g = TransformerBlock.build(cfg, DType.BF16).graph();
                    for (boolean fuse : new boolean[]{true, false}) {
                        try {
                            Graph run = fuse ? g : GemmSample.withOutputs(g, GemmSample.of(g));
                            var model = Compiler.compile(run, CompileOptions.defaults().withTarget("cuda").withFuse(fuse));
                            for (Step st : CudaLowering.lower(model, target).steps()) {
                                if (st instanceof Step.Launch l && seen.add(l.source().sourceHash())) {
                                    CudaKernelSource src = l.source();
                                    cache.get(new KernelSource(src.entry(), src.source(), List.of(), src.variant(), src.archSpecific()));
                                    compiled.incrementAndGet();
                                }
                            }
                        } catch (RuntimeException e) {
                            failures.incrementAndGet();
                        }
                    }
                });
            }
        } finally {
            pool.shutdown();
            pool.awaitTermination(10, TimeUnit.MINUTES);
        }
        System.out.printf("[gpu-shapes] %d distinct kernels in the kernel cache in %.1f s (%d configs or kernels left to their tests)%n",
                compiled.get(), (System.nanoTime() - t0) / 1e9, failures.get());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("configs")
    void compiledAndTunedMatchTheReferenceOrEager(BlockConfig cfg, int index) {
        if (started++ == 0) {
            startNanos = System.nanoTime();
        }
        long t0 = System.nanoTime();
        boolean ok = false;
        try {
            ok = check(cfg, index, t0);
        } finally {
            if (!ok) {
                failed.add(cfg.name());
            }
        }
    }

    /** What the eager run hands on: the input it drew, the parameters too (small configs), its output. */
    private record EagerRun(Map<String, Tensor> inputs, Map<String, Tensor> host, double[] out) {}

    /** True when the config passed or was refused with a typed error. */
    private static boolean check(BlockConfig cfg, int index, long t0) {
        CudaDevice dev = Gpu.device();
        long seed = RandomBlocks.seed() * 1000 + index;
        Model model = TransformerBlock.build(cfg, DType.BF16);
        Graph graph = model.graph();
        boolean small = cfg.flops() <= REFERENCE_FLOPS;
        EagerRun eager;
        try {
            eager = eager(dev, cfg, graph, seed, small);
        } catch (LanternException e) {
            return refused(cfg, "eager", e);
        }
        double[] expected = eager.out();
        String against = "eager";
        if (small) {
            expected = ReferenceInterpreter.run(graph, eager.host()).get(graph.outputs().getFirst()).data();
            double e = DemoMetrics.relErr(eager.out(), expected);
            report(cfg, "eager vs float64", e);
            assertTrue(e <= TOLERANCE, cfg.name() + ": eager vs float64 rel err " + e);
            against = "float64";
        }
        boolean tune = TUNE_EVERY > 0 && index % TUNE_EVERY == 0;
        for (boolean autotune : tune ? new boolean[]{false, true} : new boolean[]{false}) {
            String mode = autotune ? "tuned" : "compiled";
            try {
                double e = DemoMetrics.relErr(compiled(dev, cfg, graph, eager.inputs(), autotune), expected);
                report(cfg, mode + " vs " + against, e);
                assertTrue(e <= TOLERANCE, cfg.name() + ": " + mode + " vs " + against + " rel err " + e);
            } catch (LanternException e) {
                return refused(cfg, mode, e);
            }
        }
        tuned += tune ? 1 : 0;
        vsReference += small ? 1 : 0;
        vsEager += small ? 0 : 1;
        correct++;
        System.out.printf("[gpu-shapes] %s (%.2e flops, seed %d) ok in %.1f s%n", cfg.name(), cfg.flops(), seed,
                (System.nanoTime() - t0) / 1e9);
        return true;
    }

    /** One eager forward, its sampled GEMMs checked on the host, with the sampled operands kept as outputs. */
    private static EagerRun eager(CudaDevice dev, BlockConfig cfg, Graph graph, long seed, boolean small) {
        List<GemmSample> samples = GemmSample.of(graph);
        try (CudaSession s = CudaSession.open(dev, GemmSample.withOutputs(graph, samples), null, CudaSession.Options.eager())) {
            s.fillInputs(seed);
            s.poison();
            s.forward();
            double[] out = finite(cfg, "eager", s.output());
            for (GemmSample g : samples) {
                double e = GemmSample.relErr(s.output(g.a()), s.output(g.w()), s.output(g.out()), 4, seed);
                assertTrue(e <= GEMM_TOLERANCE, cfg.name() + ": eager " + g.out() + " vs float64 on the host: rel err " + e);
                gemmSamples++;
            }
            Map<String, Tensor> inputs = download(s, s.model().graph().inputs());
            Map<String, Tensor> host = new LinkedHashMap<>(inputs); // parameters and input, as the device drew them
            if (small) {
                host.putAll(download(s, s.model().graph().params()));
            }
            return new EagerRun(inputs, host, out);
        }
    }

    /** One compiled forward (autotuned first, if asked) on poisoned buffers: its output. */
    private static double[] compiled(CudaDevice dev, BlockConfig cfg, Graph graph, Map<String, Tensor> inputs, boolean autotune) {
        CudaSession.Options o = CudaSession.Options.compiled().withPolicy(GraphPolicy.OFF);
        try (CudaSession s = CudaSession.open(dev, graph, null, autotune ? o.withAutotune(TuneCache.none()) : o)) {
            s.setInputs(inputs);
            if (autotune) {
                s.autotune();
            }
            s.poison();
            s.forward();
            return finite(cfg, autotune ? "tuned" : "compiled", s.output());
        }
    }

    /**
     * A typed refusal (a {@link LanternException}: the CUDA path does not take this shape, at
     * open or, for a launch contract checked as eager binds, before the launch), counted by
     * constraint. A CUDA error is no LanternException and fails the config.
     */
    private static boolean refused(BlockConfig cfg, String mode, LanternException e) {
        String c = mode + ": " + RandomBlocks.constraintOf(e);
        refusals.merge(c, 1, Integer::sum);
        System.out.println("[gpu-shapes] " + cfg.name() + " refused (" + c + "): " + e.getMessage());
        return true;
    }

    private static Map<String, Tensor> download(CudaSession s, List<Node> nodes) {
        Map<String, Tensor> m = new LinkedHashMap<>();
        for (Node n : nodes) {
            m.put(n.attrs().getString("name", n.name()), s.output(n.name()));
        }
        return m;
    }

    private static double[] finite(BlockConfig cfg, String mode, Tensor t) {
        double[] d = t.toDoubles();
        for (int i = 0; i < d.length; i++) {
            if (!Double.isFinite(d[i])) {
                throw new AssertionError(cfg.name() + " " + mode + ": element " + i + " is " + d[i] + " (not written, or overflowed)");
            }
        }
        return d;
    }

    private static void report(BlockConfig cfg, String what, double e) {
        System.out.printf("[gpu-shapes] %s %-22s rel_err=%.2e%n", cfg.name(), what, e);
    }

    /**
     * The block of issue 12 that died with CUDA_ERROR_ILLEGAL_ADDRESS before e7ee535: the
     * expandable allocator unmapped free tails under kernels still queued, which eager
     * forwards with activations of 1–10 MiB hit. Three eager forwards back to back without a
     * synchronisation (as a timed loop runs them), then two more, each against compiled.
     */
    @Test
    void eagerForwardsInARowMatchCompiledOnTheBlockThatFaulted() {
        CudaDevice dev = Gpu.device();
        Graph graph = TransformerBlock.build(new BlockConfig("odd", 3, 1000, 1536, 12, 6000, true), DType.BF16).graph();
        double[] compiled;
        Map<String, Tensor> inputs;
        try (CudaSession c = CudaSession.open(dev, graph, null, CudaSession.Options.compiled().withPolicy(GraphPolicy.OFF))) {
            c.fillInputs(1000);
            inputs = download(c, c.model().graph().inputs());
            c.poison();
            c.forward();
            compiled = c.output().toDoubles();
        }
        try (CudaSession e = CudaSession.open(dev, graph, null, CudaSession.Options.eager())) {
            e.setInputs(inputs);
            for (int run = 1; run <= 5; run++) {
                e.forward();
                if (run < 3) {
                    continue; // queued behind the previous forward, as in a timed loop
                }
                double err = DemoMetrics.relErr(e.output().toDoubles(), compiled); // output() synchronises
                System.out.printf("[gpu-shapes] odd 3x1000x1536 eager forward %d vs compiled rel_err=%.2e%n", run, err);
                assertTrue(err <= TOLERANCE, "eager forward " + run + " vs compiled: rel err " + err);
            }
        }
    }

    /**
     * This class's leak check. The tier-wide free-memory check runs before it, since the first
     * pass over 60 shapes loads hundreds of kernels (NVRTC modules kept in the cache's sessions'
     * lifetime, cuBLASLt kernels loaded lazily for the context's lifetime) and the driver counts
     * that code as used memory: 14 MiB on the H200 at 2a0ce66, which a tier-wide check cannot tell
     * from a leak. Here every kernel is already loaded: two more passes over the first four
     * configs (eager, compiled, tuned where due, 8+ sessions) must leave free memory unchanged to
     * the byte; a session that leaks any allocation or module moves it.
     */
    @Test
    void repeatedShapesHoldNoMoreMemory() {
        CudaDevice dev = Gpu.device();
        List<BlockConfig> all = RandomBlocks.configs();
        int n = Math.min(4, all.size());
        long[] free = new long[2];
        for (int pass = 0; pass < 2; pass++) {
            for (int i = 0; i < n; i++) {
                check(all.get(i), i, System.nanoTime());
            }
            free[pass] = dev.freeMemory();
        }
        System.out.printf("[gpu] random shapes, leak check over 2 passes of %d configs: free %d -> %d bytes (moved %d)%n",
                n, free[0], free[1], free[0] - free[1]);
        assertTrue(free[1] == free[0], "free memory moved by " + (free[0] - free[1]) + " bytes over a repeated pass");
    }

    @AfterAll
    static void summary() {
        if (started == 0) {
            return;
        }
        System.out.printf("[gpu] random shapes (seed %d): %d configs, %d correct (%d vs float64, %d vs eager; %d also autotuned;"
                        + " %d eager GEMM samples vs float64), %d refused %s, %d failed %s, %.0f s%n",
                RandomBlocks.seed(), started, correct, vsReference, vsEager, tuned, gemmSamples,
                refusals.values().stream().mapToInt(Integer::intValue).sum(), refusals, failed.size(), failed,
                (System.nanoTime() - startNanos) / 1e9);
    }
}
