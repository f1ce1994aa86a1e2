package dev.lantern.bench.cpu;

import dev.lantern.engine.CompiledCpuExecutor;
import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.KernelTraffic;
import dev.lantern.tensor.Tensor;

import dev.lantern.trace.Span;
import dev.lantern.trace.Tracing;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.LongConsumer;

/**
 * {@code lantern bench cpu}'s measurement (issue 15, "know where the time goes"): Lantern's compiled
 * CPU forward and, when an ONNX file is given, ONNX Runtime's on the same graph, in one JVM.
 *
 * <p>Both sides are warmed alike ({@code warmups} forwards each: enough for C2 to compile the hot
 * kernels), then timed in {@code rounds} interleaved rounds, one forward of each per round, the order
 * swapped every round so that neither always runs second on a warm cache; the figures are medians
 * (and minima, less sensitive to other load). Then Lantern alone runs {@code rounds} more forwards
 * with the executor's per-kernel profile on ({@link CompiledCpuExecutor#profiling}): the step table,
 * each kernel's mean wall time per forward and its share of the profiled forward. The timed rounds
 * run with the profile off, so the headline figure carries no clock reads.
 *
 * <p>With PyTorch in the rounds, each timed forward follows untimed forwards of its own side for at
 * least {@link #LEAD_IN_NANOS}: PyTorch's OpenMP workers spin for milliseconds after its forward
 * (libgomp's default; ten of them on the AMD host), and on a 2-core machine that took a core from
 * whichever side ran next. Turning the spin off (OMP_WAIT_POLICY=PASSIVE) slowed PyTorch's own
 * forward by 1.7x, and waiting for it to stop left the next side to start on idle cores; a lead-in
 * times every side as a serving loop runs it, after its own forward.
 */
public final class CpuBench {
    private CpuBench() {}

    /** Least warm-up time (both sides together) before timing, whatever {@code warmups} says. */
    static final long WARM_NANOS = 5_000_000_000L;

    /** Least time of a side's own untimed forwards before each of its timed ones, with PyTorch in the rounds. */
    static final long LEAD_IN_NANOS = 20_000_000L;

    /** The agreement past which a model's figure is marked invalid (relative L2 error against ORT, in double). */
    public static final double MAX_REL_ERR = 1e-4;

    /**
     * One kernel of the step table: name, kind, the fused ops, mean ms per forward, share of the profiled forward, and the
     * bytes it reads and writes once under the cost model ({@link KernelTraffic}, as the GPU bench's DRAM GB/s takes them).
     */
    public record Step(String kernel, String kind, String ops, double ms, double share, long bytes) {
        /** Memory GB/s (1e9 B/s) of this kernel: cost-model bytes ÷ its time; NaN without a time. */
        public double gbps() {
            return ms > 0 ? bytes / (ms * 1e-3) / 1e9 : Double.NaN;
        }
    }

    /**
     * @param outsideMs the profiled forward's time outside every kernel: input and arena views, output copies
     * @param outputCopyMs the part of {@code outsideMs} spent copying the outputs out of the arena into the reused output set
     * @param ortMs     NaN without a peer
     * @param relErr    ‖Lantern − ORT‖₂ / ‖ORT‖₂ of the first output; NaN when not comparable (a block's weights differ)
     * @param lanternCpuMs median CPU time of the calling thread per forward: at one thread the whole forward
     *                  on both sides (ORT runs a 1-thread session on the caller), and, unlike wall time, blind to
     *                  the other processes of a shared machine; at more threads only the caller's share
     * @param ortCpuMs  the same for ORT (NaN without a peer)
     * @param torch     PyTorch's figures, or null without {@code --torch}
     */
    public record Result(String caseName, int threads, int rounds, int warmups, double lanternMs, double lanternMinMs,
                         List<Step> steps, double profiledMs, double outsideMs, double outputCopyMs, double ortMs, double ortMinMs,
                         String ortVersion, double relErr, double lanternCpuMs, double ortCpuMs, TorchFigures torch) {
        public boolean hasPeer() {
            return !Double.isNaN(ortMs);
        }

        /** PyTorch's time over Lantern's: above 1 Lantern is faster (NaN without PyTorch). */
        public double speedVsTorch() {
            return torch == null ? Double.NaN : torch.ms() / lanternMs;
        }

        /** ORT's time over Lantern's: above 1 Lantern is faster. */
        public double speedVsOrt() {
            return ortMs / lanternMs;
        }

        /**
         * Cost-model bytes of every kernel ÷ their profiled time, in GB/s: the CPU's counterpart of {@code bench macro}'s
         * {@code dram_gbps} (bytes that a cache holds count as moved, so on a small block this is above what DRAM gives).
         * NaN without a profiled kernel time.
         */
        public double dramGbps() {
            double ms = steps.stream().mapToDouble(Step::ms).sum();
            long bytes = steps.stream().mapToLong(Step::bytes).sum();
            return ms > 0 ? bytes / (ms * 1e-3) / 1e9 : Double.NaN;
        }

        public boolean valid() {
            return Double.isNaN(relErr) || relErr <= MAX_REL_ERR;
        }
    }

    /** PyTorch's medians: wall, minimum and its thread's CPU time per forward, with its version. */
    public record TorchFigures(String version, double ms, double minMs, double cpuMs) {}

    /** Forwards {@link #run} performs in all (for a progress bar): warm-up and timed rounds of each side, then the profiled ones. */
    public static long forwards(int rounds, int warmups, int sides) {
        return (long) sides * (rounds + warmups) + rounds;
    }

    /**
     * Times {@code target} and, when {@code peerFile} is not null, ONNX Runtime on that file with the
     * same inputs and {@code threads} intra-op threads, and PyTorch in {@code torch} when not null (the
     * caller builds it; it is not closed here). {@code progress} hears the forwards done so far.
     */
    public static Result run(CpuTarget target, Path peerFile, TorchPeer torch, int threads, int rounds, int warmups,
                             LongConsumer progress) {
        Map<String, Tensor> in = target.inputs();
        long[] done = {0};
        Runnable tick = () -> progress.accept(++done[0]);
        try (CompiledCpuExecutor exec = target.executor(); OrtPeer ort = peerFile == null ? null : new OrtPeer(peerFile, threads, in)) {
            // one set of outputs reused by every forward, as a serving loop would (ORT likewise hands
            // out outputs from its own arena): the figure is the forward, not a 26 MB allocation
            Map<String, Tensor> outs = exec.newOutputs();
            // at least `warmups` forwards a side and at least WARM_NANOS of them: C2 needs a few hundred
            // forwards of a small block (cpu-small after 20: 7.2 ms; after 500: 2.1 ms)
            double[] lt = new double[rounds];
            double[] pt = new double[rounds];
            double[] pc = new double[rounds];
            double[] ot = new double[rounds];
            double[] lc = new double[rounds];
            double[] oc = new double[rounds];
            // untraced (--trace): the figures are of plain forwards; the profiled forwards below are traced, a slice per kernel
            try (Tracing.Installed untraced = Tracing.suspend()) {
                long warmStart = System.nanoTime();
                for (int i = 0; i < warmups || (warmups > 0 && System.nanoTime() - warmStart < WARM_NANOS); i++) {
                    exec.run(in, outs);
                    tick.run();
                    if (ort != null) {
                        ort.run();
                        tick.run();
                    }
                    if (torch != null) {
                        torch.run();
                        tick.run();
                    }
                }
                boolean leadIn = torch != null;
                Runnable lantern = () -> exec.run(in, outs);
                for (int i = 0; i < rounds; i++) {
                    boolean lanternFirst = i % 2 == 0;
                    if (lanternFirst || ort == null) {
                        lt[i] = time(lantern, lc, i, leadIn);
                        tick.run();
                    }
                    if (ort != null) {
                        ot[i] = time(ort::run, oc, i, leadIn);
                        tick.run();
                        if (!lanternFirst) {
                            lt[i] = time(lantern, lc, i, leadIn);
                            tick.run();
                        }
                    }
                    if (torch != null) {
                        leadIn(torch::run);
                        pt[i] = torch.run();
                        pc[i] = torch.lastCpuMs();
                        tick.run();
                    }
                }
            }
            exec.profiling(true);
            long t0 = System.nanoTime();
            for (int i = 0; i < rounds; i++) {
                try (Span span = Tracing.span("profiled forward", "step")) {
                    exec.run(in, outs);
                }
                tick.run();
            }
            double profiledMs = (System.nanoTime() - t0) / 1e6 / rounds;
            exec.profiling(false);
            double copyMs = exec.outputCopyNanos() / 1e6 / Math.max(1, exec.profiledForwards());
            List<Step> steps = steps(target, exec.kernelNanos(), exec.profiledForwards(), profiledMs);
            double inKernels = steps.stream().mapToDouble(Step::ms).sum();
            double rel = Double.NaN;
            if (ort != null && target.onnx() != null) {
                rel = relErr(exec.run(in, outs).values().iterator().next().toDoubles(), ort.firstOutput());
            }
            return new Result(target.name(), threads, rounds, warmups, median(lt), min(lt), steps, profiledMs,
                    Math.max(0, profiledMs - inKernels), copyMs, ort == null ? Double.NaN : median(ot), ort == null ? Double.NaN : min(ot),
                    ort == null ? null : ort.version(), rel, median(lc), ort == null ? Double.NaN : median(oc),
                    torch == null ? null : new TorchFigures(torch.version(), median(pt), min(pt), median(pc)));
        }
    }

    private static List<Step> steps(CpuTarget target, long[] nanos, long forwards, double profiledMs) {
        List<Kernel> kernels = target.model().kernels();
        List<Step> steps = new ArrayList<>(kernels.size());
        for (int i = 0; i < kernels.size(); i++) {
            Kernel k = kernels.get(i);
            double ms = nanos[i] / 1e6 / Math.max(1, forwards);
            steps.add(new Step(k.name(), k.kind().name().toLowerCase(java.util.Locale.ROOT), String.join("+", k.fusedOps()), ms,
                    profiledMs > 0 ? ms / profiledMs : 0, KernelTraffic.bytes(k)));
        }
        return steps;
    }

    /** ‖got − ref‖₂ / ‖ref‖₂; infinite for a length mismatch or a non-zero difference from an all-zero reference. */
    static double relErr(double[] got, double[] ref) {
        if (got.length != ref.length) {
            return Double.POSITIVE_INFINITY;
        }
        double num = 0;
        double den = 0;
        for (int i = 0; i < got.length; i++) {
            double d = got[i] - ref[i];
            num += d * d;
            den += ref[i] * ref[i];
        }
        return den == 0 ? (num == 0 ? 0 : Double.POSITIVE_INFINITY) : Math.sqrt(num / den);
    }

    private static final java.lang.management.ThreadMXBean THREAD = java.lang.management.ManagementFactory.getThreadMXBean();

    /** Wall ms of one forward, after untimed ones for {@link #LEAD_IN_NANOS} when {@code leadIn}; its CPU ms on this thread into cpu[i]. */
    static double time(Runnable r, double[] cpu, int i, boolean leadIn) {
        if (leadIn) {
            leadIn(r);
        }
        return time(r, cpu, i);
    }

    /** Untimed forwards of one side for at least {@link #LEAD_IN_NANOS}. */
    private static void leadIn(Runnable r) {
        for (long t0 = System.nanoTime(); System.nanoTime() - t0 < LEAD_IN_NANOS; ) {
            r.run();
        }
    }

    /** Wall ms of one forward; its CPU ms on this thread into cpu[i]. */
    static double time(Runnable r, double[] cpu, int i) {
        long c0 = THREAD.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        r.run();
        long t1 = System.nanoTime();
        cpu[i] = (THREAD.getCurrentThreadCpuTime() - c0) / 1e6;
        return (t1 - t0) / 1e6;
    }

    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    static double min(double[] v) {
        return Arrays.stream(v).min().orElse(Double.NaN);
    }
}
