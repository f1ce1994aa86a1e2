package dev.lantern.cuda.engine;

import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.codegen.AttentionSpec;
import dev.lantern.cuda.codegen.CodegenException;
import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.ffi.CudaContextLostException;
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.codegen.KernelSpec;
import dev.lantern.cuda.codegen.NormSpec;
import dev.lantern.cuda.codegen.SoftmaxSpec;
import dev.lantern.cuda.lower.CudaLowering;
import dev.lantern.cuda.lower.KernelNames;
import dev.lantern.cuda.lower.Step;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Basic autotuning (the Phase 1 plan's "tile, warp and vector sweeps", first rung): each
 * generated kernel with tile choices is timed once per variant on the session's real buffers and
 * the winner cached under the kernel's cache key; each cuBLASLt GEMM times up to 8 heuristic
 * candidates and caches the index. A cached choice is reused without timing.
 *
 * <ul>
 * <li>norm and softmax: 16-byte row vectors per thread in {2, 4, 8} (loads in flight);
 * <li>attention: on Hopper the wgmma tiles, and the default mma.sync tile with the two best of
 *     the sweep in docs/perf-notes.md;
 * <li>GEMM: heuristic candidates 0..7 (cuBLASLt returns up to 8 for these shapes).
 * </ul>
 * Times: median of 5 CUDA-event runs after 2 warm-ups; big GEMMs under sustained load instead
 * ({@link #gemmMs}); a variant that fails to render or compile is skipped (the default stays).
 */
public final class Autotuner {
    private static final List<Integer> ROW_VECTORS = List.of(2, 4, 8);
    private static final List<CudaTarget.AttentionTile> ATTENTION = List.of(
            new CudaTarget.AttentionTile(4, 1, 64, 1),
            new CudaTarget.AttentionTile(4, 2, 32, 2),
            new CudaTarget.AttentionTile(4, 1, 64, 2));

    private static final List<CudaTarget.WgmmaTile> HOPPER = List.of(
            CudaTarget.HOPPER_ATTENTION,                       // k64, 2 stages, 1 consumer, TMA, 2 CTAs/SM
            new CudaTarget.WgmmaTile(128, 2, 1, false, 2, true), // 2 consumers at 240 registers (setmaxnreg), k128
            new CudaTarget.WgmmaTile(64, 2, 1, false, 2, true),  // 2 consumer warpgroups, TMA
            new CudaTarget.WgmmaTile(64, 3, 1, false, 2, true),
            new CudaTarget.WgmmaTile(128, 2, 1, false, 2, true, true), // ping-pong between the 2 consumers
            new CudaTarget.WgmmaTile(64, 2, 1, false, 2, true, true),
            new CudaTarget.WgmmaTile(128, 2, 1, false, 2, true).asPersistent(), // one CTA per SM walking query tiles
            new CudaTarget.WgmmaTile(128, 2, 1, false, 2, true, true).asPersistent(),
            new CudaTarget.WgmmaTile(128, 2, 1, false, 2, true, true).asPersistent(2), // the next tile's Q copied early
            new CudaTarget.WgmmaTile(64, 1, 1, false),           // no producer: every thread loads (cp.async)
            new CudaTarget.WgmmaTile(128, 1, 1, false));

    private final KernelTimer timer;
    private final TuneCache cache;
    private final String gpu;
    private final CudaTarget base;
    private final int gemmCandidates;
    private final boolean deterministic;

    /**
     * @param timer          how variants are timed (CUDA events on the session's stream)
     * @param base           the session's target (the H200 tile defaults, the device's own arch facts)
     * @param gemmCandidates how many cuBLASLt candidates a GEMM may try (the options' {@code BackendChoices})
     */
    public Autotuner(KernelTimer timer, TuneCache cache, String gpu, CudaTarget base, int gemmCandidates) {
        this(timer, cache, gpu, base, gemmCandidates, false);
    }

    /**
     * As above; {@code deterministic}: strict mode, whose GEMM candidate lists hold only algorithms
     * without split-K, so its GEMM choices are cached under their own keys ({@code .det}): an index
     * means another algorithm there. The choices themselves are recorded in the cache as always and
     * replayed from it (docs/determinism.md).
     */
    public Autotuner(KernelTimer timer, TuneCache cache, String gpu, CudaTarget base, int gemmCandidates, boolean deterministic) {
        this.timer = timer;
        this.cache = cache;
        this.gpu = gpu;
        this.base = base;
        this.gemmCandidates = gemmCandidates;
        this.deterministic = deterministic;
    }

    /**
     * The attention variants timed on {@code base}, by tag: the wgmma tiles where the GPU has
     * wgmma, then the mma.sync tiles. The first is the default.
     */
    public static Map<String, CudaTarget> attentionVariants(CudaTarget base) {
        Map<String, CudaTarget> v = new LinkedHashMap<>();
        if (base.wgmmaAttention() != null) {
            HOPPER.forEach(t -> v.put(t.tag(), base.withWgmmaAttention(t)));
        }
        ATTENTION.forEach(t -> v.put(t.tag(), base.withAttention(t, t)));
        return v;
    }

    /** The cache key of a generated kernel: its source hash under the default target, and the GPU. */
    String kernelKey(KernelSpec spec, CudaTarget base) {
        return "kernel." + KernelNames.withName(spec, KernelNames.PLACEHOLDER).render(base).sourceHash().substring(0, 24)
                + "." + gpu.replace(' ', '_');
    }

    /** The cache key of a GEMM spec on {@code gpu} (the micro benchmarks share it). */
    public static String gemmKey(GemmSpec s, String gpu) {
        return "gemm2." + s.m() + "x" + s.n() + "x" + s.k() + "b" + s.batch() + (s.transA() ? "T" : "N") + (s.transB() ? "T" : "N")
                + "." + s.abType() + "." + s.cdType() + "." + s.epilogue() + (s.ldd() != s.n() ? ".ld" + s.ldd() : "") + "." + gpu.replace(' ', '_');
    }

    /** Whether the tuned choice for GELU-epilogue GEMM {@code fused} is "plain GEMM, then GELU in place". */
    boolean splitGelu(GemmSpec fused) {
        return "1".equals(cache.get(gemmKey(fused, gpu) + (deterministic ? ".det" : "") + ".split"));
    }

    /** The target to render {@code spec} for: the cached choice, or the session's default. */
    CudaTarget targetFor(KernelSpec spec) {
        if (!tunable(spec)) {
            return base;
        }
        String choice = cache.get(kernelKey(spec, base));
        return choice == null ? base : apply(base, choice);
    }

    private boolean tunable(KernelSpec spec) {
        return spec instanceof NormSpec || spec instanceof SoftmaxSpec
                || spec instanceof AttentionSpec a && a.fastPath(base);
    }

    private static CudaTarget apply(CudaTarget base, String choice) {
        if (choice.startsWith("rv")) {
            return base.withRowVectorsPerThread(Integer.parseInt(choice.substring(2)));
        }
        return attentionVariants(base).getOrDefault(choice, base);
    }

    private List<String> variants(KernelSpec spec) {
        List<String> v = new ArrayList<>();
        if (spec instanceof AttentionSpec) {
            v.addAll(attentionVariants(base).keySet());
        } else {
            ROW_VECTORS.forEach(n -> v.add("rv" + n));
        }
        return v;
    }

    /** Times every untuned generated kernel's variants; true when some choice differs from the default. */
    boolean tuneKernels(CudaLowering.Lowered lowered, StepRunner runner) {
        boolean changed = false;
        Set<String> done = new HashSet<>();
        for (Step s : lowered.steps()) {
            if (!(s instanceof Step.Launch l) || !tunable(l.spec())) {
                continue;
            }
            String key = kernelKey(l.spec(), base);
            if (!done.add(key) || cache.get(key) != null) {
                changed |= cache.get(key) != null;
                continue;
            }
            Map<String, Double> times = new LinkedHashMap<>();
            for (String v : variants(l.spec())) {
                try {
                    CudaKernelSource src = KernelNames.render(l.spec(), apply(base, v));
                    Runnable r = runner.launch(src, l.args());
                    times.put(v, loadedMs(r));
                } catch (CodegenException | dev.lantern.cuda.nvrtc.KernelCompileException e) {
                    // a variant this shape cannot take: skip it
                }
            }
            String best = times.entrySet().stream().min(Map.Entry.comparingByValue()).map(Map.Entry::getKey).orElse(null);
            if (best != null) {
                cache.put(key, best);
                changed = true;
            }
        }
        return changed;
    }

    /**
     * Times each GEMM's heuristic candidates (cached choices are taken as they are). A GELU
     * epilogue is also timed split: the same GEMM without GELU (its own best candidate), then
     * an elementwise GELU in place; the faster form is cached ({@code <key>.split = 1|0}).
     * Returns whether some GEMM is to be split (the session then lowers again).
     */
    boolean tuneGemms(CudaLowering.Lowered lowered, StepRunner runner, Map<Step.GemmUse, Integer> choice) {
        boolean split = false;
        for (Step s : lowered.steps()) {
            if (!(s instanceof Step.Gemm g)) {
                continue;
            }
            double fusedMs = tuneOne(g, runner, choice);
            GemmSpec.Epilogue e = g.spec().epilogue();
            if (e != GemmSpec.Epilogue.GELU && e != GemmSpec.Epilogue.GELU_BIAS) {
                continue;
            }
            String key = gemmKey(g.spec(), gpu) + (deterministic ? ".det" : "") + ".split";
            if (cache.get(key) == null && fusedMs < Double.MAX_VALUE) {
                GemmSpec plainSpec = new GemmSpec(g.spec().m(), g.spec().n(), g.spec().k(), g.spec().batch(), g.spec().transA(),
                        g.spec().transB(), g.spec().abType(), g.spec().cdType(),
                        e.hasBias() ? GemmSpec.Epilogue.BIAS : GemmSpec.Epilogue.NONE, g.spec().biasType(), g.spec().ldd());
                Step.Gemm plain = new Step.Gemm(g.kernel(), plainSpec, g.a(), g.b(), g.c(), g.d(), g.bias(), g.beta(), g.aOffset());
                double plainMs = tuneOne(plain, runner, choice);
                Runnable gemm = runner.gemm(plain, choice.getOrDefault(plain.use(), 0));
                Runnable gelu = runner.launch(geluInPlace(g), List.of(new Step.Ptr(g.d()), new Step.Ptr(g.d()),
                        new Step.I64(g.spec().dElements())));
                double splitMs = loadedMs(() -> {
                    gemm.run();
                    gelu.run();
                });
                cache.put(key, splitMs < fusedMs * 0.99 && plainMs < Double.MAX_VALUE ? "1" : "0");
            }
            split |= "1".equals(cache.get(key));
        }
        return split;
    }

    private static CudaKernelSource geluInPlace(Step.Gemm g) {
        long n = g.spec().dElements();
        dev.lantern.ir.DType t = switch (g.spec().cdType()) {
            case F32 -> dev.lantern.ir.DType.F32;
            case F16 -> dev.lantern.ir.DType.F16;
            case BF16 -> dev.lantern.ir.DType.BF16;
        };
        List<Long> shape = List.of(n);
        return KernelNames.render(new dev.lantern.cuda.codegen.ElementwiseSpec("lt_addact", shape,
                List.of(dev.lantern.cuda.codegen.ElementwiseSpec.Operand.contiguous(t, shape)),
                List.of(new dev.lantern.cuda.codegen.ElementwiseSpec.Step(dev.lantern.cuda.codegen.ElementwiseOp.GELU_TANH, List.of(0))),
                t), CudaTarget.H200);
    }

    /** Best candidate of one GEMM (cached index, else timed up to {@code gemmCandidates}); its median ms (MAX_VALUE when taken from the cache). */
    private double tuneOne(Step.Gemm g, StepRunner runner, Map<Step.GemmUse, Integer> choice) {
        String key = useKey(g.use(), gpu) + (deterministic ? ".det" : "");
        int n = Math.max(1, Math.min(gemmCandidates, runner.available(g.spec())));
        String cached = cache.get(key);
        if (cached != null || choice.containsKey(g.use())) {
            int c = cached == null ? choice.get(g.use()) : Integer.parseInt(cached);
            choice.put(g.use(), c < n ? c : 0);
            return loadedMs(runner.gemm(g, choice.get(g.use())));
        }
        Choice best = bestCandidate(key, n, c -> runner.gemm(g, c));
        choice.put(g.use(), best.index());
        return best.ms();
    }

    /** A tuned choice: the candidate's index and its median ms. */
    public record Choice(int index, double ms) {}

    /**
     * The fastest of {@code n} candidates, each run by {@code run.apply(i)}, timed as
     * {@link #loadedMs} times work, and cached under {@code key} (a cached index is returned
     * without timing, with ms MAX_VALUE). A candidate that fails at run time is never chosen;
     * a lost context is not a bad candidate and is thrown. The one GEMM search: sessions and the
     * micro benchmarks call it.
     */
    public Choice bestCandidate(String key, int n, java.util.function.IntFunction<Runnable> run) {
        String cached = cache.get(key);
        if (cached != null) {
            int c = Integer.parseInt(cached);
            return new Choice(c < n ? c : 0, Double.MAX_VALUE);
        }
        int best = 0;
        double bestMs = Double.MAX_VALUE;
        for (int c = 0; c < n; c++) {
            try {
                double ms = loadedMs(run.apply(c));
                if (ms < bestMs) {
                    bestMs = ms;
                    best = c;
                }
            } catch (CudaContextLostException e) {
                throw e; // not a bad candidate: the context is gone, and every later one would fail too
            } catch (RuntimeException e) {
                // a candidate that fails at run time is never chosen
            }
        }
        cache.put(key, Integer.toString(best));
        return new Choice(best, bestMs);
    }

    /** The cache key of a GEMM use: the spec's key, {@code .c} when it reads C. */
    static String useKey(Step.GemmUse use, String gpu) {
        return gemmKey(use.spec(), gpu) + (use.withC() ? ".c" : "");
    }

    /** Work that runs this long (GEMMs of ~70 GFLOP and up, big attention) is timed under sustained load. */
    static final double SUSTAIN_MIN_MS = 0.1;
    static final double SUSTAIN_WARM_MS = 200;

    /**
     * A GEMM's (or kernel's) time as a big forward sees it. Big GEMMs hold an H200 at its 700 W power limit,
     * where the SM clock drops from 1980 to ~1450 MHz and the fastest candidate is the one
     * that spends the least energy per FLOP, not the one fastest in a short burst after idle
     * (measured: the burst pick cost the decoder 0.2 ms, docs/perf-notes.md). So work whose
     * single run takes {@link #SUSTAIN_MIN_MS} or more is timed after {@link #SUSTAIN_WARM_MS}
     * of back-to-back runs; smaller work, which never reaches the limit, in a short burst.
     */
    private double loadedMs(Runnable g) {
        double burst = timer.medianMs(g, 2, 5);
        return burst < SUSTAIN_MIN_MS ? burst : timer.sustainedMs(g, SUSTAIN_WARM_MS, 30);
    }

    /** At open: the cached GEMM choices, without timing. */
    void applyCachedGemms(CudaLowering.Lowered lowered, StepRunner runner, Map<Step.GemmUse, Integer> choice) {
        for (Step s : lowered.steps()) {
            if (s instanceof Step.Gemm g && !choice.containsKey(g.use())) {
                String cached = cache.get(useKey(g.use(), gpu) + (deterministic ? ".det" : ""));
                if (cached != null) {
                    int c = Integer.parseInt(cached);
                    choice.put(g.use(), c < runner.available(g.spec()) ? c : 0);
                }
            }
        }
    }
}
