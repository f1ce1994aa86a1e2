package dev.lantern.bench.cpu;

import dev.lantern.cpu.EagerExecutor;
import dev.lantern.engine.CompiledCpuExecutor;
import dev.lantern.ir.Graph;
import dev.lantern.ir.LanternException;
import dev.lantern.tensor.Tensor;

import java.util.HashMap;
import java.util.Map;

/**
 * The CPU half of the performance gate: Lantern's compiled forward against its naive eager one (the
 * unfused graph op by op, each output a fresh tensor: {@link EagerExecutor}, what a {@code --mode eager}
 * session runs) on the same target, in one JVM, so that the ratio is from one run. Warmed alike, then
 * timed in interleaved rounds with the order swapped each round; the figures are medians of the calling
 * thread's CPU time, which other processes on a shared CI machine do not inflate (at one thread the
 * forward runs on the caller). The outputs of both are compared, so that a fast wrong forward is no pass.
 */
public final class EagerVsCompiled {
    private EagerVsCompiled() {}

    /**
     * @param compiledMs median CPU ms of a compiled forward
     * @param eagerMs    median CPU ms of an eager forward
     * @param relErr     ‖compiled − eager‖₂ / ‖eager‖₂ over the first output, in double
     */
    public record Result(String caseName, int rounds, int warmups, double compiledMs, double eagerMs, double compiledMinMs, double eagerMinMs,
                         double compiledWallMs, double eagerWallMs, double relErr) {
        /** Eager's time over compiled's (medians): above 1 the compiled forward is faster. */
        public double speedup() {
            return eagerMs / compiledMs;
        }
    }

    /**
     * Times {@code rounds} interleaved pairs after at least {@code warmups} forwards of each and at least
     * {@code warmSeconds} of warming in all: C2 compiles the hot kernels of both paths only after a few
     * hundred forwards, and a ratio taken before that swings from 1.2x to 9x (seen on cpu-small).
     */
    public static Result run(CpuTarget target, int rounds, int warmups, double warmSeconds) {
        if (rounds < 1 || warmups < 0 || !(warmSeconds >= 0)) {
            throw new LanternException("eager vs compiled: rounds must be >= 1, warm-ups and warm seconds >= 0, found " + rounds + ", "
                    + warmups + " and " + warmSeconds);
        }
        Graph unfused = target.model().unfused();
        Map<String, Tensor> feeds = new HashMap<>(target.params());
        feeds.putAll(target.inputs());
        String firstOut = unfused.outputs().getFirst();
        EagerExecutor eager = new EagerExecutor();
        try (CompiledCpuExecutor exec = target.executor()) {
            Map<String, Tensor> outs = exec.newOutputs();
            Runnable compiled = () -> exec.run(target.inputs(), outs);
            Runnable naive = () -> eager.run(unfused, feeds);
            long warmStart = System.nanoTime();
            long warmNanos = (long) (warmSeconds * 1e9);
            int warmed = 0;
            while (warmed < warmups || System.nanoTime() - warmStart < warmNanos) {
                compiled.run();
                naive.run();
                warmed++;
            }
            double[] c = new double[rounds];
            double[] e = new double[rounds];
            double[] cw = new double[rounds];
            double[] ew = new double[rounds];
            for (int i = 0; i < rounds; i++) {
                if (i % 2 == 0) {
                    cw[i] = CpuBench.time(compiled, c, i);
                    ew[i] = CpuBench.time(naive, e, i);
                } else {
                    ew[i] = CpuBench.time(naive, e, i);
                    cw[i] = CpuBench.time(compiled, c, i);
                }
            }
            double[] got = exec.run(target.inputs(), outs).values().iterator().next().toDoubles();
            double[] ref = eager.run(unfused, feeds).get(firstOut).toDoubles();
            return new Result(target.name(), rounds, warmed, CpuBench.median(c), CpuBench.median(e), CpuBench.min(c), CpuBench.min(e), CpuBench.median(cw),
                    CpuBench.median(ew), CpuBench.relErr(got, ref));
        }
    }
}
