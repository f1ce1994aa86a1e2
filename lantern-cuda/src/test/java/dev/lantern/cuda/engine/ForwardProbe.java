package dev.lantern.cuda.engine;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.lower.Step;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.runtime.GraphPolicy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A GPU-machine probe (not a test): for a big block, each GEMM's cuBLASLt candidates timed in a
 * short burst (how the autotuner times them) and under sustained load (the power-limited state
 * the forward runs in), then the forward with each choice and the eager forward, interleaved.
 * Usage: {@code ForwardProbe decoder [encoder ...]}.
 */
public final class ForwardProbe {
    private ForwardProbe() {}

    public static void main(String[] args) {
        Probes.eachBlock(args, ForwardProbe::probe);
    }

    private static void probe(CudaDevice device, BlockConfig cfg) {
        var model = TransformerBlock.build(cfg, DType.BF16);
        try (CudaSession s = CudaSession.open(device, model.graph(), null,
                CudaSession.Options.compiled().withPolicy(GraphPolicy.OFF).withAutotune(TuneCache.none()));
             CudaSession e = CudaSession.open(device, model.graph(), null, CudaSession.Options.eager())) {
            s.fillInputs(7);
            e.fillInputs(7);
            s.autotune();
            Map<Step.GemmUse, Integer> burst = new HashMap<>(s.gemmChoices());
            // one step per (spec, with C or not): the o projection's +C shares its spec with q, k, v
            Map<String, Step.Gemm> first = new LinkedHashMap<>();
            for (Step st : s.lowered().steps()) {
                if (st instanceof Step.Gemm g) {
                    first.putIfAbsent(g.spec() + (g.c() != null ? " +C" : ""), g);
                }
            }
            Map<Step.GemmUse, Integer> sustained = new HashMap<>(burst);
            for (var en : first.entrySet()) {
                GemmSpec spec = en.getValue().spec();
                Step.GemmUse use = en.getValue().use();
                var cands = s.gemm(spec).candidates();
                int n = Math.max(1, Math.min(dev.lantern.engine.BackendChoices.DEFAULT_GEMM_CANDIDATES, cands.size()));
                List<String> row = new ArrayList<>();
                int best = -1;
                double bestMs = Double.MAX_VALUE;
                for (int c = 0; c < n; c++) {
                    s.chooseGemm(use, c);
                    Runnable g = s.bind(en.getValue());
                    try {
                        double b = s.timeMs(g, 2, 5);
                        double su = s.sustainedMs(g, 200, 40);
                        java.nio.ByteBuffer algo = java.nio.ByteBuffer.wrap(cands.get(c).algo()).order(java.nio.ByteOrder.LITTLE_ENDIAN);
                        row.add(String.format(Locale.ROOT, "%d:%.3f/%.3f[w%.2f %x %x]", c, b, su, cands.get(c).waves(),
                                algo.getLong(0), algo.getLong(8)));
                        if (su < bestMs) {
                            bestMs = su;
                            best = c;
                        }
                    } catch (RuntimeException ex) {
                        row.add(c + ":fail");
                    }
                }
                sustained.put(use, best);
                s.chooseGemm(use, burst.getOrDefault(use, 0));
                System.out.printf(Locale.ROOT, "%s gemm %dx%dx%d %s%s: %d candidates, tuned pick %d, sustained pick %d (%.4f ms)%n   burst/sustained ms %s%n",
                        cfg.name(), spec.m(), spec.n(), spec.k(), spec.epilogue(), en.getValue().c() != null ? " +C" : "", cands.size(),
                        burst.getOrDefault(use, 0), best, bestMs, String.join(" ", row));
            }
            int rounds = 5;
            double[] a = new double[rounds];
            double[] b = new double[rounds];
            double[] ea = new double[rounds];
            double[] a2 = new double[rounds];
            double[] b2 = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                burst.forEach(s::chooseGemm);
                a[r] = s.sustainedMs(s::forward, 300, 30);
                a2[r] = s.timeMs(s::forward, 10, 30);
                sustained.forEach(s::chooseGemm);
                b[r] = s.sustainedMs(s::forward, 300, 30);
                b2[r] = s.timeMs(s::forward, 10, 30);
                ea[r] = e.timeMs(e::forward, 3, 30);
                System.out.printf(Locale.ROOT, "%s round %d: burst-tuned %.4f (bench-style %.4f), sustained-tuned %.4f (bench-style %.4f), eager %.4f%n",
                        cfg.name(), r, a[r], a2[r], b[r], b2[r], ea[r]);
            }
            Arrays.sort(a);
            Arrays.sort(b);
            Arrays.sort(ea);
            Arrays.sort(a2);
            Arrays.sort(b2);
            System.out.printf(Locale.ROOT, "%s medians: burst-tuned %.4f / %.4f, sustained-tuned %.4f / %.4f, eager %.4f; eager/compiled %.3f%n",
                    cfg.name(), a[2], a2[2], b[2], b2[2], ea[2], ea[2] / b2[2]);
            for (CudaSession.StepTime t : s.profileInForward(3, 30)) {
                System.out.printf(Locale.ROOT, "  %8.4f in forward  %s%n", t.ms(), t.op());
            }
        }
    }
}
