package dev.lantern.cli;

import dev.lantern.cpu.EagerExecutor;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledCpuExecutor;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.engine.Feeds;
import dev.lantern.frontend.Model;
import dev.lantern.ir.Graph;
import dev.lantern.reference.Accuracy;
import dev.lantern.reference.RefTensor;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Tensor;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * The figures {@code ./lantern demo} reports for the compiler: compile a model, run it eager (op
 * by op, each op allocating its output) and compiled (fused kernels out of one arena) on the CPU
 * in the same process, time both (median of {@code runs} forwards after {@code warmup}), and
 * compare the compiled output with the float64 reference.
 *
 * @param relErr          ‖compiled − reference‖₂ / ‖reference‖₂ (the reference runs the source graph)
 * @param relErrVsEager   ‖compiled − eager f32‖₂ / ‖eager f32‖₂ (the AMP figure of issue 3)
 * <p>Eager runs {@link CompiledModel#unfused()} (with AMP: the autocast graph, op by op), so the
 * speedup compares the same arithmetic fused and unfused.
 */
public record DemoMetrics(int kernels, double fusionCoverage, double eagerMs, double compiledMs, double speedup,
                          long plannedPeakBytes, long lowerBoundBytes, long naiveBytes, double relErr,
                          double relErrVsEager, String cacheKey) {

    /** Forwards before timing: enough for C2 to compile the hot kernels on a 2-core machine. */
    public static final int DEFAULT_WARMUP = 20;

    /** {@link #measure(Model, long, CompileOptions, int, int)} with {@link #DEFAULT_WARMUP} and 15 timed runs. */
    public static DemoMetrics measure(Model model, long seed, CompileOptions options) {
        return measure(model, seed, options, DEFAULT_WARMUP, 15);
    }

    /**
     * Compile, run and measure {@code model} with weights and input drawn from {@code seed}. At least
     * {@link #DEFAULT_WARMUP} warm-up forwards run whatever {@code warmup} says: before C2 has compiled
     * the kernels, timings measure the JIT, not the code (a 3-forward warm-up has shown "speedups"
     * of 0.9 that are 1.5 once warm).
     */
    public static DemoMetrics measure(Model model, long seed, CompileOptions options, int warmup, int runs) {
        warmup = Math.max(warmup, DEFAULT_WARMUP);
        Graph g = model.graph();
        CompiledModel compiled = Compiler.compile(g, options);
        Map<String, Tensor> params = model.parameters(seed);
        Map<String, Tensor> inputs = Feeds.inputs(g, seed);
        Map<String, Tensor> all = new HashMap<>(params);
        all.putAll(inputs);
        // The eager baseline runs the same numerics op by op: the unfused graph (autocast when AMP is
        // on), with parameters converted to the dtypes it declares before timing, as bind does.
        Graph eagerGraph = compiled.unfused();
        Map<String, Tensor> eagerFeeds = Feeds.declared(eagerGraph, all);
        String out = g.outputs().getFirst();
        String eagerOut = eagerGraph.outputs().getFirst();

        EagerExecutor eager = new EagerExecutor();
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(compiled).bind(params)) {
            Tensor compiledOut = null;
            Map<String, Tensor> outs = exec.newOutputs(); // reused: a serving loop allocates its outputs once
            for (int i = 0; i < warmup; i++) {
                eager.run(eagerGraph, eagerFeeds);
                compiledOut = exec.run(inputs, outs).get(out);
            }
            // interleaved, alternating which goes first, so that both see the same machine load
            double[] te = new double[runs];
            double[] tc = new double[runs];
            for (int i = 0; i < runs; i++) {
                for (int side = 0; side < 2; side++) {
                    boolean eagerNow = (side == 0) == (i % 2 == 0);
                    long t0 = System.nanoTime();
                    if (eagerNow) {
                        eager.run(eagerGraph, eagerFeeds);
                    } else {
                        compiledOut = exec.run(inputs, outs).get(out);
                    }
                    double ms = (System.nanoTime() - t0) / 1e6;
                    if (eagerNow) {
                        te[i] = ms;
                    } else {
                        tc[i] = ms;
                    }
                }
            }
            RefTensor ref = ReferenceInterpreter.run(g, all).get(out);
            double[] f32 = options.amp() == CompileOptions.Amp.NONE ? eager.run(eagerGraph, eagerFeeds).get(eagerOut).toDoubles()
                    : eager.run(g, all).get(out).toDoubles();
            double eMs = median(te);
            double cMs = median(tc);
            return new DemoMetrics(compiled.kernels().size(), compiled.fusionCoverage(), eMs, cMs, eMs / cMs,
                    compiled.plan().arenaBytes(), compiled.plan().lowerBound(), compiled.plan().naiveBytes(),
                    Accuracy.relErr(compiledOut.toDoubles(), ref.data()), Accuracy.relErr(compiledOut.toDoubles(), f32),
                    compiled.cacheKey());
        }
    }

    static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    /** The JSON fields that {@code ./lantern demo --json} adds (no braces: the caller merges them). */
    public String jsonFields() {
        return String.format(java.util.Locale.ROOT,
                "\"kernels\": %d, \"fusion_coverage\": %.4f, \"eager_ms\": %.3f, \"compiled_ms\": %.3f, \"speedup\": %.3f, "
                        + "\"planned_peak_bytes\": %d, \"lower_bound_bytes\": %d, \"naive_bytes\": %d, \"compiled_rel_err\": %.3e",
                kernels, fusionCoverage, eagerMs, compiledMs, speedup, plannedPeakBytes, lowerBoundBytes, naiveBytes, relErr);
    }
}
