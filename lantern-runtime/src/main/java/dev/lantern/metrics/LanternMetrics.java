package dev.lantern.metrics;

import dev.lantern.trace.RuntimeCounters;
import dev.lantern.SessionStats;
import dev.lantern.runtime.alloc.AllocatorStats;
import dev.lantern.train.run.StepResult;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Unit;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * Lantern's Prometheus metrics (issue 18; docs/observability.md), registered on the registry the
 * caller passes when this object is built, so that every one shows on {@code /metrics} from the
 * start, even while it is 0. The names keep the Phase 1 plan's spelling ({@code step_time_ms},
 * {@code alloc_frag_pct}); where a name carries a unit Prometheus would spell otherwise, the help
 * text says the unit.
 *
 * <p>The recording methods are thread-safe. The figures Lantern keeps as running totals
 * ({@link AllocatorStats#ooms()}, {@link SessionStats#graphFallbacks()}) are turned into counter
 * increments here: each snapshot adds what grew since the one before, so a counter never goes
 * down and a repeated snapshot adds nothing.
 */
public final class LanternMetrics {
    /** Every metric name as it appears in the exposition (counters with their _total). */
    public static final List<String> NAMES = List.of("step_time_ms", "tokens_per_s", "alloc_frag_pct", "alloc_reserved_bytes",
            "alloc_allocated_bytes", "occ_pct", "graph_hit_pct", "graph_fallbacks_total", "dram_gbps", "kernel_launches_total",
            "compiles_total", "compile_cache_hits_total", "oom_total", "loss_scale", "overflow_steps_total");

    /** The fallback reasons the sessions report today, shown at 0 so that the family is on /metrics before the first. */
    static final List<String> KNOWN_FALLBACK_REASONS = List.of("cpu", "policy");

    /** Step times from a tiny CPU block (about 1 ms) to a large GPU step (seconds), in ms. */
    private static final double[] STEP_MS_BUCKETS = {0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 30000};

    private final PrometheusRegistry registry;
    private final Histogram stepTimeMs;
    private final Gauge tokensPerS;
    private final Gauge allocFragPct;
    private final Gauge allocReservedBytes;
    private final Gauge allocAllocatedBytes;
    private final Gauge occPct;
    private final Gauge graphHitPct;
    private final Counter graphFallbacks;
    private final Gauge dramGbps;
    // launches, compiles and cache hits: the process's RuntimeCounters since this object was built, plus what the API added,
    // read when scraped (the executors pay a LongAdder increment per forward, nothing here)
    private final LongAdder kernelLaunches = new LongAdder();
    private final LongAdder compiles = new LongAdder();
    private final LongAdder compileCacheHits = new LongAdder();
    private final Counter ooms;
    private final Gauge lossScale;
    private final Counter overflowSteps;

    // the last running totals seen, to turn snapshots into increments
    private long lastOoms;
    private final Map<String, Long> lastFallbacks = new HashMap<>();

    /** The metrics on Prometheus' default registry (what a JVM-wide exporter serves). Once per process. */
    public LanternMetrics() {
        this(PrometheusRegistry.defaultRegistry);
    }

    /**
     * The metrics on {@code registry}.
     *
     * @throws IllegalArgumentException if {@code registry} already holds one of these names (a second
     *                               LanternMetrics on the same registry)
     */
    public LanternMetrics(PrometheusRegistry registry) {
        this.registry = registry;
        stepTimeMs = Histogram.builder().name("step_time_ms")
                .help("Wall time of one step (training: forward, backward and optimizer; inference: one forward), in milliseconds")
                .classicOnly().classicUpperBounds(STEP_MS_BUCKETS).register(registry);
        tokensPerS = Gauge.builder().name("tokens_per_s")
                .help("Tokens processed per second by the last step (batch x sequence / step wall time)").register(registry);
        allocFragPct = Gauge.builder().name("alloc_frag_pct")
                .help("Caching allocator fragmentation in percent: 100 x (1 - largest free block / free bytes); 0 when nothing is free")
                .register(registry);
        allocReservedBytes = Gauge.builder().name("alloc_reserved_bytes").unit(Unit.BYTES)
                .help("Bytes the caching allocator holds from the device, over all segments").register(registry);
        allocAllocatedBytes = Gauge.builder().name("alloc_allocated_bytes").unit(Unit.BYTES)
                .help("Bytes in blocks the caching allocator has handed out and not yet had back").register(registry);
        occPct = Gauge.builder().name("occ_pct")
                .help("Achieved occupancy of the last kernels measured, in percent of the SM's resident warps").register(registry);
        graphHitPct = Gauge.builder().name("graph_hit_pct")
                .help("Forwards that replayed a captured CUDA graph, in percent of all forwards of the session").register(registry);
        graphFallbacks = Counter.builder().name("graph_fallbacks_total")
                .help("Forwards asked to replay a CUDA graph that ran without one, by reason").labelNames("reason").register(registry);
        for (String reason : KNOWN_FALLBACK_REASONS) {
            graphFallbacks.initLabelValues(reason);
        }
        dramGbps = Gauge.builder().name("dram_gbps")
                .help("DRAM throughput of the last kernels measured: cost-model bytes / time, in gigabytes (1e9 B) per second")
                .register(registry);
        runningTotal(registry, "kernel_launches_total",
                "Kernels launched: CPU kernels and eager ops, CUDA kernels and GEMM library calls, each kernel of a replayed CUDA graph",
                () -> kernelLaunches.sum() + RuntimeCounters.launches());
        runningTotal(registry, "compiles_total", "Kernels compiled (NVRTC compiles, cache misses of the kernel module cache; CPU kernels lowered)",
                () -> compiles.sum() + RuntimeCounters.compiles());
        runningTotal(registry, "compile_cache_hits_total",
                "Kernels found compiled (in the kernel module cache on disk or prebuilt; CPU: in the compiled program)",
                () -> compileCacheHits.sum() + RuntimeCounters.cacheHits());
        ooms = Counter.builder().name("oom_total").help("Typed out-of-memory errors thrown by the caching allocator")
                .register(registry);
        lossScale = Gauge.builder().name("loss_scale")
                .help("The loss scale of the last training step (1 without a dynamic loss scaler; dimensionless)").register(registry);
        overflowSteps = Counter.builder().name("overflow_steps_total")
                .help("Training steps skipped because the scaled gradients were not finite").register(registry);
        lossScale.set(1);
    }

    public PrometheusRegistry registry() {
        return registry;
    }

    /** One step: its wall time and the tokens it processed (0 when the step has no tokens: tokens_per_s is left alone). */
    public void recordStep(double ms, long tokens) {
        if (!(ms >= 0) || Double.isInfinite(ms)) {
            throw new IllegalArgumentException("step time must be finite and >= 0 ms, got " + ms);
        }
        if (tokens > 0 && ms > 0) {
            tokensPerS.set(tokens / (ms / 1e3));
        }
        stepTimeMs.observe(ms); // last: a scrape that counts the step sees its other figures too
    }

    /** One training step: step time, tokens/s, its loss scale, and an overflow when the scaler skipped it. */
    public void recordTrainStep(StepResult r, long tokensPerStep) {
        lossScale.set(r.scale());
        if (!r.applied()) {
            overflowSteps.inc();
        }
        recordStep(r.nanos() / 1e6, tokensPerStep);
    }

    /** An allocator snapshot: fragmentation, reserved and allocated bytes, and the OOMs since the last snapshot. */
    public synchronized void allocator(AllocatorStats s) {
        allocFragPct.set(s.allocFragPct());
        allocReservedBytes.set(s.reserved());
        allocAllocatedBytes.set(s.allocated());
        if (s.ooms() > lastOoms) {
            ooms.inc(s.ooms() - lastOoms);
        }
        lastOoms = Math.max(lastOoms, s.ooms());
    }

    /** A session's forwards so far: graph_hit_pct and the fallbacks since the last snapshot, by reason. */
    public synchronized void session(SessionStats s) {
        graphHitPct.set(s.graphHitPct());
        for (Map.Entry<String, Long> e : s.graphFallbacks().entrySet()) {
            long before = lastFallbacks.getOrDefault(e.getKey(), 0L);
            if (e.getValue() > before) {
                graphFallbacks.labelValues(e.getKey()).inc(e.getValue() - before);
                lastFallbacks.put(e.getKey(), e.getValue());
            }
        }
    }

    /**
     * {@code n} kernel launches Lantern's executors did not count (an embedding program's own kernels). Lantern's
     * own launches, compiles and cache hits need no call: the counters read {@link RuntimeCounters} when scraped.
     */
    public void kernelLaunches(long n) {
        kernelLaunches.add(nonNegative(n));
    }

    /** {@code n} kernels compiled outside Lantern's caches. */
    public void compiles(long n) {
        compiles.add(nonNegative(n));
    }

    /** {@code n} kernels found compiled outside Lantern's caches. */
    public void compileCacheHits(long n) {
        compileCacheHits.add(nonNegative(n));
    }

    /** One out-of-memory error seen outside an allocator snapshot (a device allocation that failed). */
    public void oom() {
        ooms.inc();
    }

    /** Achieved occupancy of the last kernels measured, in percent. */
    public void occupancy(double pct) {
        occPct.set(pct);
    }

    /** DRAM throughput of the last kernels measured, in GB/s. */
    public void dramGbps(double gbps) {
        dramGbps.set(gbps);
    }

    /**
     * A benchmark's kernel figures: occupancy (%) and DRAM GB/s of the kernels it profiled, as {@code lantern bench}
     * puts them in its JSON ({@code occ_pct}, {@code dram_gbps}). A figure that is not finite (no launch it could be
     * computed for: the CPU has no occupancy, a forward of GEMMs only has none either) leaves its gauge as it was.
     */
    public void kernelFigures(double occPct, double gbps) {
        if (Double.isFinite(occPct)) {
            occupancy(occPct);
        }
        if (Double.isFinite(gbps)) {
            dramGbps(gbps);
        }
    }

    /**
     * A counter whose value, at each scrape, is {@code total} less what it was when this object was built:
     * what this process did while these metrics existed, so a command's counters start at 0 like its others.
     */
    private static void runningTotal(PrometheusRegistry registry, String name, String help, LongSupplier total) {
        long start = total.getAsLong();
        CounterWithCallback.builder().name(name).help(help).callback(cb -> cb.call(total.getAsLong() - start)).register(registry);
    }

    private static long nonNegative(long n) {
        if (n < 0) {
            throw new IllegalArgumentException("a counter only grows: got " + n);
        }
        return n;
    }
}
