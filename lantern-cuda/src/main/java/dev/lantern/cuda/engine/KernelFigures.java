package dev.lantern.cuda.engine;

import dev.lantern.cuda.codegen.LaunchConfig;
import dev.lantern.cuda.lower.Step;
import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.KernelTraffic;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToIntFunction;

/**
 * Per-kernel figures of a profiled compiled forward: each launch's shape and theoretical
 * occupancy (cuOccupancyMaxActiveBlocksPerMultiprocessor for its block size and dynamic shared
 * memory, against the SM's thread limit), and each IR kernel's DRAM GB/s: its bytes under
 * {@link KernelTraffic}'s cost model ÷ the measured time of the steps that serve it.
 *
 * <p>Occupancy here is what the launch allows, not what the kernel achieved (that is ncu's
 * {@code sm__warps_active}); a launch with fewer blocks than the GPU holds at once is also
 * reported as the occupancy its grid can reach ({@link Launch#gridOccupancyPct}). cuBLASLt GEMMs
 * choose their launches inside the library: they have times and bytes but no launch figures.
 */
public final class KernelFigures {
    private KernelFigures() {}

    /** One step: a generated launch (with its shape and occupancy) or a GEMM (shape null, occupancy NaN). */
    public record Launch(int step, String op, double ms, LaunchConfig shape, int blocksPerSm, double occupancyPct,
                         double gridOccupancyPct, double waves) {}

    /** One IR kernel: the steps that serve it, their time, its cost-model bytes and DRAM GB/s. */
    public record Figure(int kernel, String name, long bytes, double ms, double dramGbps, List<Launch> launches) {}

    /** The forward's summary: time-weighted theoretical occupancy of the launches, and total bytes ÷ total time. */
    public record Summary(double occPct, double dramGbps) {}

    /**
     * % of the SM's thread slots that {@code blocksPerSm} resident blocks of {@code threads}
     * threads fill; a block occupies whole warps, so 48 threads take two warps' slots.
     */
    public static double occupancyPct(int blocksPerSm, int threads, int maxThreadsPerSm) {
        if (blocksPerSm <= 0 || maxThreadsPerSm <= 0) {
            return 0;
        }
        long warpThreads = (threads + 31L) / 32 * 32;
        return Math.min(100.0, 100.0 * blocksPerSm * warpThreads / maxThreadsPerSm);
    }

    /** GB/s (1e9 bytes per second) of {@code bytes} moved in {@code ms}; NaN without a positive time. */
    public static double gbps(long bytes, double ms) {
        return ms > 0 ? bytes / (ms * 1e-3) / 1e9 : Double.NaN;
    }

    /**
     * The figures of {@code steps} (stream order), timed as {@code stepMs} (same order, e.g.
     * {@link CudaSession#profileInForward}); {@code blocksPerSm} asks the occupancy API for a launch.
     */
    public static List<Figure> of(List<Step> steps, List<Kernel> kernels, List<CudaSession.StepTime> stepMs,
            ToIntFunction<Step.Launch> blocksPerSm, int maxThreadsPerSm, int smCount) {
        if (steps.size() != stepMs.size()) {
            throw new IllegalArgumentException(steps.size() + " steps but " + stepMs.size() + " step times");
        }
        Map<Integer, List<Launch>> byKernel = new LinkedHashMap<>();
        for (int i = 0; i < steps.size(); i++) {
            Step s = steps.get(i);
            double ms = stepMs.get(i).ms();
            Launch l = switch (s) {
                case Step.Launch launch -> {
                    LaunchConfig c = launch.source().launch();
                    int perSm = blocksPerSm.applyAsInt(launch);
                    long blocks = c.gridX() * c.gridY() * c.gridZ();
                    int reachable = (int) Math.min(perSm, (blocks + smCount - 1) / Math.max(1, smCount));
                    yield new Launch(i, stepMs.get(i).op(), ms, c, perSm, occupancyPct(perSm, c.threads(), maxThreadsPerSm),
                            occupancyPct(reachable, c.threads(), maxThreadsPerSm),
                            perSm > 0 ? (double) blocks / ((long) perSm * smCount) : Double.NaN);
                }
                case Step.Gemm g -> new Launch(i, stepMs.get(i).op(), ms, null, 0, Double.NaN, Double.NaN, Double.NaN);
            };
            byKernel.computeIfAbsent(s.kernel(), k -> new ArrayList<>()).add(l);
        }
        List<Figure> out = new ArrayList<>();
        for (Map.Entry<Integer, List<Launch>> e : byKernel.entrySet()) {
            Kernel k = kernels.get(e.getKey());
            long bytes = KernelTraffic.bytes(k);
            double ms = e.getValue().stream().mapToDouble(Launch::ms).sum();
            out.add(new Figure(k.index(), k.name(), bytes, ms, gbps(bytes, ms), List.copyOf(e.getValue())));
        }
        return out;
    }

    /** Occupancy weighted by each launch's time (GEMMs left out), and Σ bytes ÷ Σ time over every kernel. */
    public static Summary summary(List<Figure> figures) {
        double occTime = 0;
        double launchTime = 0;
        long bytes = 0;
        double ms = 0;
        for (Figure f : figures) {
            bytes += f.bytes();
            ms += f.ms();
            for (Launch l : f.launches()) {
                if (!Double.isNaN(l.occupancyPct())) {
                    occTime += l.occupancyPct() * l.ms();
                    launchTime += l.ms();
                }
            }
        }
        return new Summary(launchTime > 0 ? occTime / launchTime : Double.NaN, gbps(bytes, ms));
    }
}
