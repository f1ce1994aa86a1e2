package dev.lantern.cuda.engine;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.lower.Step;
import dev.lantern.engine.DemoMetrics;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.runtime.GraphPolicy;
import dev.lantern.tensor.Tensor;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A GPU-machine probe (not a test) for {@code scripts/gpu-sanitize}: the forwards a user runs,
 * kept short enough for compute-sanitizer. Per block: a compiled session (autotuned with
 * {@code --tune}) runs {@code --forwards N} forwards (default 2), then a CUDA-graph capture and
 * a replay; an eager session runs N forwards back to back (as a timed loop queues them) and
 * its output is compared with compiled (bf16, within 2e-2). Exits non-zero on a mismatch or any
 * exception, after printing which block and phase it was. Usage:
 * {@code SanitizeProbe [--tune] [--forwards N] BLOCK...}, a BLOCK either a config name
 * ({@code decoder-small}) or {@code BATCHxSEQxHIDDENxHEADSxMLP-dec|enc} ({@code 3x1000x1536x12x6000-dec}).
 */
public final class SanitizeProbe {
    private SanitizeProbe() {}

    public static void main(String[] args) {
        boolean tune = false;
        boolean launchesOnly = false;
        int forwards = 2;
        List<BlockConfig> blocks = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--tune" -> tune = true;
                case "--forwards" -> forwards = Integer.parseInt(args[++i]);
                case "--launches-only" -> launchesOnly = true;
                default -> blocks.add(parse(args[i]));
            }
        }
        if (blocks.isEmpty()) {
            System.err.println("usage: SanitizeProbe [--tune] [--forwards N] BLOCK... (BLOCK: a config name or BxSxHxHEADSxMLP-dec|enc)");
            System.exit(2);
        }
        try (CudaDevice device = CudaDevice.open(0)) {
            for (BlockConfig cfg : blocks) {
                if (launchesOnly) {
                    launches(device, cfg, tune);
                } else {
                    run(device, cfg, tune, forwards);
                }
            }
        }
    }

    /**
     * Lantern's own kernels of a compiled forward, each launched alone with a
     * synchronisation after it, the cuBLASLt GEMMs skipped: racecheck cannot run cuBLASLt's
     * kernels ("Internal Sanitizer Error: The Sanitizer failed to handle a hardware exception",
     * then CUBLAS_STATUS_EXECUTION_FAILED, on the H200 with compute-sanitizer 2025.3.1), and the
     * hazards it looks for are in the hand-written kernels' shared memory. The GEMM outputs the
     * kernels read hold the previous forward's values or the fill: racecheck checks the order of
     * shared-memory accesses, not the numbers.
     */
    private static void launches(CudaDevice device, BlockConfig cfg, boolean tune) {
        Graph graph = TransformerBlock.build(cfg, DType.BF16).graph();
        long t0 = System.nanoTime();
        // compiled only: an eager session allocates its activations inside its forward
        for (CudaSession.Options o : List.of(CudaSession.Options.compiled().withPolicy(GraphPolicy.OFF))) {
            try (CudaSession s = CudaSession.open(device, graph, null, tune && o.mode() == CudaSession.Mode.COMPILED
                    ? o.withAutotune(TuneCache.none()) : o)) {
                s.fillInputs(7);
                int n = 0;
                for (Step st : s.lowered().steps()) {
                    if (st instanceof Step.Launch) {
                        s.bind(st).run();
                        s.synchronize();
                        n++;
                    }
                }
                phase(cfg, n + " " + o.mode().name().toLowerCase(java.util.Locale.ROOT) + " kernel launches (GEMMs skipped)", t0);
            }
        }
    }

    static BlockConfig parse(String s) {
        if (!s.matches("\\d+x\\d+x\\d+x\\d+x\\d+-(dec|enc)")) {
            return BlockConfig.named(s);
        }
        String[] d = s.substring(0, s.indexOf('-')).split("x");
        return new BlockConfig(s, Integer.parseInt(d[0]), Integer.parseInt(d[1]), Integer.parseInt(d[2]),
                Integer.parseInt(d[3]), Integer.parseInt(d[4]), s.endsWith("-dec"));
    }

    private static void run(CudaDevice device, BlockConfig cfg, boolean tune, int forwards) {
        Graph graph = TransformerBlock.build(cfg, DType.BF16).graph();
        long t0 = System.nanoTime();
        double[] compiled;
        Map<String, Tensor> inputs = new LinkedHashMap<>();
        CudaSession.Options o = CudaSession.Options.compiled().withPolicy(GraphPolicy.REQUIRE);
        try (CudaSession s = CudaSession.open(device, graph, null, tune ? o.withAutotune(TuneCache.none()) : o)) {
            s.fillInputs(7);
            for (Node n : s.model().graph().inputs()) {
                inputs.put(n.attrs().getString("name", n.name()), s.output(n.name()));
            }
            if (tune) {
                s.autotune();
                phase(cfg, "autotuned", t0);
            }
            for (int i = 0; i < forwards; i++) {
                s.poison();
                s.forward();
                s.synchronize();
            }
            compiled = s.output().toDoubles();
            phase(cfg, forwards + " compiled forwards", t0);
            s.poison();
            s.forwardGraph(); // capture
            s.poison();
            s.forwardGraph(); // replay
            check(cfg, "graph replay vs compiled", DemoMetrics.relErr(s.output().toDoubles(), compiled), 0.0);
        }
        try (CudaSession e = CudaSession.open(device, graph, null, CudaSession.Options.eager())) {
            e.setInputs(inputs);
            for (int i = 0; i < forwards; i++) {
                e.forward(); // no synchronisation between them
            }
            check(cfg, forwards + " eager forwards vs compiled", DemoMetrics.relErr(e.output().toDoubles(), compiled), 2e-2);
        }
        phase(cfg, "done", t0);
    }

    private static void check(BlockConfig cfg, String what, double err, double tolerance) {
        System.out.printf("[sanitize] %s %s rel_err=%.2e%n", cfg.name(), what, err);
        if (!(err <= tolerance)) {
            throw new AssertionError(cfg.name() + ": " + what + " rel err " + err + " over " + tolerance);
        }
    }

    private static void phase(BlockConfig cfg, String what, long t0) {
        System.out.printf("[sanitize] %s %s (%.1f s)%n", cfg.name(), what, (System.nanoTime() - t0) / 1e9);
    }
}
