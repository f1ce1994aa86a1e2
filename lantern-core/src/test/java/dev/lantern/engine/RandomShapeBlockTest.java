package dev.lantern.engine;

import dev.lantern.cpu.EagerExecutor;
import dev.lantern.frontend.Model;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.LanternException;
import dev.lantern.reference.RefTensor;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Issue 12's CPU property: 200+ seeded random block shapes ({@link RandomBlockShapes} says how they
 * are drawn), each built by the frontend, compiled (f32, or bf16 AMP), run on the CPU backend out
 * of a NaN-poisoned arena and compared with the float64 reference of the source graph: relative
 * error ‖out − ref‖ / ‖ref‖ ≤ 1e-5 in f32 and ≤ 1e-2 with bf16 AMP. The eager baseline (the same
 * graph op by op, {@link CompiledModel#unfused()}) is held to the same bounds.
 *
 * <p>A shape the compiler cannot take must be refused at compile time with a typed
 * {@link LanternException} naming the constraint; refusals are counted by message and reported,
 * and, since the whole space is meant to run, any refusal fails the test too. The summary line
 * ({@code random-shapes: ...}) is the figure the issue asks for.
 *
 * <p>{@code -Dlantern.randomShapes.count=N}, {@code -Dlantern.randomShapes.seed=S} and
 * {@code -Dlantern.randomShapes.budget=W} (reference work per shape) widen, move or enlarge the
 * sample ({@code -Dlantern.randomShapes.verbose=true} prints each shape); a failure message
 * names the shape and its seed. Each forward also runs twice on the same executor, the arena
 * poisoned before each, so a value left over from the previous forward cannot pass.
 */
class RandomShapeBlockTest {
    static final long MASTER_SEED = 20261201L;
    static final int COUNT = 200;
    static final double TOL_F32 = 1e-5;
    static final double TOL_AMP = 1e-2;

    @Test
    void randomShapesMatchFloat64Reference() {
        long master = Long.getLong("lantern.randomShapes.seed", MASTER_SEED);
        int count = Integer.getInteger("lantern.randomShapes.count", COUNT);
        double budget = Double.parseDouble(System.getProperty("lantern.randomShapes.budget", String.valueOf(RandomBlockShapes.BUDGET)));
        List<RandomBlockShapes> shapes = RandomBlockShapes.draw(master, count, budget);
        if (count >= COUNT) {
            assertCovers(shapes);
        }

        long t0 = System.nanoTime();
        long cpu0 = cpu();
        int threadsBefore = Thread.activeCount();
        int passed = 0;
        double[] maxErr = new double[2];
        double[] maxEager = new double[2];
        int[] runs = new int[2];
        Map<String, Integer> refusals = new TreeMap<>();
        List<String> failures = new ArrayList<>();
        boolean verbose = Boolean.getBoolean("lantern.randomShapes.verbose");
        for (RandomBlockShapes s : shapes) {
            long t1 = cpu();
            Outcome o = check(s);
            if (verbose) {
                System.out.printf(Locale.ROOT, "%s cost %.0fM: %.3f s cpu, %s%n", s.label(), s.cost() / 1e6, (cpu() - t1) / 1e9, o);
            }
            if (o.refusal != null) {
                refusals.merge(o.refusal, 1, Integer::sum);
                failures.add(s.label() + ": refused: " + o.refusal);
                continue;
            }
            int k = s.amp() ? 1 : 0;
            runs[k]++;
            maxErr[k] = Math.max(maxErr[k], o.relErr);
            maxEager[k] = Math.max(maxEager[k], o.eagerRelErr);
            double tol = s.amp() ? TOL_AMP : TOL_F32;
            if (o.relErr <= tol && o.eagerRelErr <= tol) {
                passed++;
            } else {
                failures.add(s.label() + ": relative error compiled " + o.relErr + ", eager " + o.eagerRelErr);
            }
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        double cpuSecs = (cpu() - cpu0) / 1e9;
        System.out.printf(Locale.ROOT, "random-shapes: master seed %d, %d configs, %d passed; f32 %d runs max rel err %.3e (eager %.3e, tol %.0e); "
                        + "bf16-amp %d runs max rel err %.3e (eager %.3e, tol %.0e); refusals %d %s; %.1f s wall, %.1f s cpu%n",
                master, shapes.size(), passed, runs[0], maxErr[0], maxEager[0], TOL_F32, runs[1], maxErr[1], maxEager[1], TOL_AMP,
                refusals.values().stream().mapToInt(Integer::intValue).sum(), refusals, secs, cpuSecs);
        assertTrue(failures.isEmpty(), failures.size() + " of " + shapes.size() + " shapes failed:\n" + String.join("\n", failures));
        assertEquals(shapes.size(), passed);
        // every forward runs on the backend's one pool (at most THREADS - 1 workers, started on first use):
        // none of the compiles, executors or forwards may leave threads of its own behind
        int allowed = threadsBefore + dev.lantern.cpu.CpuConfig.THREADS;
        assertTrue(Thread.activeCount() <= allowed, "threads before " + threadsBefore + ", after " + Thread.activeCount());
    }

    /** CPU time of the whole JVM: on a shared CI machine it says more about the test's cost than wall time. */
    static long cpu() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** The result for one shape: the compiled and eager relative errors, or a refusal's message. */
    record Outcome(double relErr, double eagerRelErr, String refusal) {}

    /** Build, compile, poison, run twice (the second on the reused arena) and compare with float64. */
    static Outcome check(RandomBlockShapes s) {
        Model m = TransformerBlock.build(s.config(), DType.F32);
        Graph g = m.graph();
        CompiledModel c;
        try {
            c = Compiler.compile(g, CompileOptions.defaults().withAmp(s.amp() ? CompileOptions.Amp.BF16 : CompileOptions.Amp.NONE));
        } catch (LanternException e) {
            return new Outcome(Double.NaN, Double.NaN, e.getClass().getSimpleName() + ": " + e.getMessage());
        }
        Map<String, Tensor> params = m.parameters(s.seed());
        Map<String, Tensor> inputs = Feeds.inputs(g, s.seed());
        Map<String, Tensor> all = new HashMap<>(params);
        all.putAll(inputs);
        String out = g.outputs().getFirst();
        RefTensor ref = ReferenceInterpreter.run(g, all).get(out);
        assertTrue(nonZero(ref.data()), s.label() + ": the reference is all zeros; the check would prove nothing");
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(c).bind(params)) {
            double worst = 0;
            for (int run = 0; run < 2; run++) {
                exec.poisonArena();
                Tensor y = exec.run(inputs).get(out);
                assertEquals(ref.data().length, y.numel(), s.label());
                worst = Math.max(worst, relErr(y, ref.data()));
            }
            // the eager baseline (the same numerics op by op, outputs poisoned) is held to the same bound
            Graph eg = c.unfused();
            Tensor e = new EagerExecutor(true).run(eg, Feeds.declared(eg, all)).get(eg.outputs().getFirst());
            return new Outcome(worst, relErr(e, ref.data()), null);
        } catch (LanternException e) {
            fail(s.label() + ": compiled, then refused at run time (refusals belong at compile time): " + e, e);
            throw e;
        }
    }

    /** ‖y − ref‖ / ‖ref‖; any NaN or infinity in y is an infinite error. */
    static double relErr(Tensor y, double[] ref) {
        double num = 0;
        double den = 0;
        for (int i = 0; i < ref.length; i++) {
            double v = y.get(i);
            if (!Double.isFinite(v)) {
                return Double.POSITIVE_INFINITY;
            }
            double d = v - ref[i];
            num += d * d;
            den += ref[i] * ref[i];
        }
        return Math.sqrt(num / den);
    }

    static boolean nonZero(double[] xs) {
        for (double x : xs) {
            if (x != 0) {
                return true;
            }
        }
        return false;
    }

    /** The sample reaches both ends of every range, both block kinds and both precisions. */
    static void assertCovers(List<RandomBlockShapes> shapes) {
        assertTrue(shapes.stream().anyMatch(s -> s.seq() == 1), "seq 1");
        assertTrue(shapes.stream().anyMatch(s -> s.seq() >= 1090), "seq near 1100");
        assertTrue(shapes.stream().anyMatch(s -> s.mlp() == 1), "mlp 1");
        assertTrue(shapes.stream().anyMatch(s -> s.mlp() >= 5900), "mlp near 6000");
        assertTrue(shapes.stream().anyMatch(s -> s.heads() == 1), "heads 1");
        assertTrue(shapes.stream().anyMatch(s -> s.heads() == RandomBlockShapes.MAX_HEADS), "heads 16");
        assertTrue(shapes.stream().anyMatch(s -> s.batch() == 1), "batch 1");
        assertTrue(shapes.stream().anyMatch(s -> s.batch() == RandomBlockShapes.MAX_BATCH), "batch 4");
        for (int hd : RandomBlockShapes.HEAD_DIMS) {
            for (boolean dec : new boolean[] {true, false}) {
                for (boolean amp : new boolean[] {true, false}) {
                    assertTrue(shapes.stream().anyMatch(s -> s.headDim() == hd && s.decoder() == dec && s.amp() == amp),
                            "head_dim " + hd + (dec ? " decoder" : " encoder") + (amp ? " bf16" : " f32"));
                }
            }
        }
    }
}
