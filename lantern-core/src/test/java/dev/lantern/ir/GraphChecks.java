package dev.lantern.ir;

import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledCpuExecutor;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.engine.Pipeline;
import dev.lantern.passes.Passes;
import dev.lantern.reference.RefTensor;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;

import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the fuzz target and the regression tests check of a graph: passes round-trip, and the compiled CPU run is right. */
public final class GraphChecks {
    private GraphChecks() {}

    /**
     * Runs every registered pass alone and the standard pipeline (f32 and bf16 AMP); each result
     * verifies and prints to text that parses back to the same text. A pass may refuse the graph
     * only with a {@link LanternException}, which is rethrown for the caller to judge.
     */
    public static void everyPassRoundTrips(Graph g) {
        for (String name : Passes.all().keySet()) {
            roundTrips(name, Passes.byName(name).run(g));
        }
        roundTrips("standard", Pipeline.standard(CompileOptions.defaults()).run(g));
        roundTrips("standard bf16", Pipeline.standard(CompileOptions.defaults().withAmp(CompileOptions.Amp.BF16)).run(g));
    }

    public static void roundTrips(String what, Graph g) {
        String printed = IrPrinter.print(g);
        Graph back = IrParser.parse(printed);
        Verifier.verify(back, "re-parse after " + what);
        assertEquals(printed, IrPrinter.print(back), "print -> parse -> print after " + what);
    }

    /** Seeded normal values for every input and parameter, by name. */
    public static Map<String, Tensor> sources(Graph g, long seed) {
        Map<String, Tensor> m = new HashMap<>();
        for (Node n : g.nodes()) {
            if (n.op() == Op.INPUT || n.op() == Op.PARAM) {
                String key = n.attrs().getString("name", n.name());
                m.put(key, Philox.normal(Tensor.allocate(n.type().contiguous()), Philox.key(seed, key), 1f));
            }
        }
        return m;
    }

    /**
     * Compiles {@code g} for the CPU, runs it on an arena poisoned first and compares every output
     * with the float64 reference: relative error within {@code tol}, non-finite values where the
     * reference has them. Returns the largest relative error.
     */
    public static double compiledMatchesReference(Graph g, long seed, double tol) {
        return compiledRun(g, seed, tol, true, false);
    }

    /**
     * As {@link #compiledMatchesReference}, for random graphs, whose numerics can be ill-conditioned
     * where no code is wrong: an output also passes when every element is within 1e-4 of the reference
     * (a layer_norm of an almost constant row: f32 cancellation gives 1e-7 on values of 1e-5), and an
     * element is skipped where the reference is NaN and the f32 run is finite (0/0 in float64 where f32
     * rounding left a tiny non-zero). A NaN where the reference is finite (an unwritten, poisoned
     * element) still fails.
     */
    public static double compiledMatchesReferenceLoosely(Graph g, long seed, double tol) {
        return compiledRun(g, seed, tol, true, true);
    }

    /**
     * Compiles and runs {@code g} and the reference, checking only that every output comes back with
     * its element count: for graphs with edge-value attributes (a softmax scale of 1e308 is inf in f32
     * and NaN after the max subtraction, finite in float64), where the two need not agree.
     */
    public static void compiledRuns(Graph g, long seed) {
        compiledRun(g, seed, 0, false, false);
    }

    private static double compiledRun(Graph g, long seed, double tol, boolean compare, boolean loose) {
        Map<String, Tensor> all = sources(g, seed);
        Map<String, RefTensor> every = ReferenceInterpreter.runAll(g, all);
        Map<String, RefTensor> ref = new HashMap<>();
        g.outputs().forEach(o -> ref.put(o, every.get(o)));
        // a value past 1e18 somewhere makes f32 intermediates overflow (a norm's sum of squares), one
        // under 1e-30 underflows to 0 in f32 (then 0/0), where float64 does neither: random graphs with
        // such values are run, not compared
        compare &= !loose || every.values().stream().allMatch(t -> java.util.Arrays.stream(t.data())
                .allMatch(v -> !(Math.abs(v) > 1e18) && !(v != 0 && Math.abs(v) < 1e-30)));
        CompiledModel cm = Compiler.compile(g, CompileOptions.defaults());
        Map<String, Tensor> params = new HashMap<>();
        Map<String, Tensor> inputs = new HashMap<>();
        for (Node n : g.nodes()) {
            String key = n.attrs().getString("name", n.name());
            if (n.op() == Op.PARAM) {
                params.put(key, all.get(key));
            } else if (n.op() == Op.INPUT) {
                inputs.put(key, all.get(key));
            }
        }
        double worst = 0;
        try (CompiledCpuExecutor x = new CompiledCpuExecutor(cm).bind(params)) {
            x.poisonArena();
            Map<String, Tensor> out = x.run(inputs);
            for (String o : g.outputs()) {
                assertEquals(ref.get(o).data().length, out.get(o).numel(), "%" + o + " element count");
                if (!compare) {
                    continue;
                }
                double e = relErr(out.get(o), ref.get(o), "%" + o, loose);
                assertTrue(e <= tol || loose && maxAbsErr(out.get(o), ref.get(o)) <= 1e-4, "%" + o + ": relative error " + e + " > " + tol + " (seed " + seed + ")\n" + g);
                worst = Math.max(worst, e);
            }
        }
        return worst;
    }

    private static double maxAbsErr(Tensor got, RefTensor want) {
        double m = 0;
        for (int i = 0; i < want.data().length; i++) {
            double d = Math.abs(got.get(i) - want.data()[i]);
            m = Double.isNaN(d) ? m : Math.max(m, d);
        }
        return m;
    }

    private static double relErr(Tensor got, RefTensor want, String what, boolean loose) {
        assertEquals(want.data().length, got.numel(), what + " element count");
        double num = 0;
        double den = 0;
        for (int i = 0; i < want.data().length; i++) {
            double w = want.data()[i];
            double o = got.get(i);
            if (Double.isInfinite(o) && Math.abs(w) > 65504 && Math.signum(o) == Math.signum(w)) {
                continue; // the value is past the range of the type computed in (f16's 65504, f32's 3.4e38): inf is right
            }
            if (loose && Double.isNaN(w) && Double.isFinite(o)) {
                continue;
            }
            if (!Double.isFinite(w) || !Double.isFinite(o)) {
                assertTrue(Double.compare(w, o) == 0 || Double.isNaN(w) && Double.isNaN(o),
                        what + "[" + i + "]: " + o + " where the reference has " + w);
                continue;
            }
            num += (o - w) * (o - w);
            den += w * w;
        }
        return den == 0 ? Math.sqrt(num) : Math.sqrt(num / den);
    }
}
