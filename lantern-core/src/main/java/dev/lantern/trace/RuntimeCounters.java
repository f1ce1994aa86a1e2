package dev.lantern.trace;

import java.util.concurrent.atomic.LongAdder;

/**
 * Process-wide running totals of what the backends did: kernels launched, kernels compiled, and
 * kernels found already compiled in a cache. The executors and the compile caches add to them as
 * they work; the metrics ({@code LanternMetrics} in lantern-runtime, {@code kernel_launches_total},
 * {@code compiles_total}, {@code compile_cache_hits_total}) read them when scraped.
 *
 * <p>Process-wide, like {@link Tracing}, so that no executor or cache API grew a
 * parameter. Each total is a {@link LongAdder}: an executor adds a forward's launches once per
 * forward (a few nanoseconds, uncontended across threads; a GPU forward of 0.3 ms would notice
 * nothing), and a reader sums the cells without stopping anyone. The totals only grow.
 *
 * <p>What each backend counts (docs/observability.md): a launch is one kernel run by an executor:
 * a CPU kernel of the compiled plan or an op of the eager executor, a CUDA kernel or cuBLASLt call
 * of a forward, and every kernel of a replayed CUDA graph. A compile is a kernel the CUDA module
 * cache compiled with NVRTC, or a kernel the compiler lowered for the CPU; a cache hit is a CUDA
 * kernel the module cache had (on disk or prebuilt), or a CPU kernel a program had
 * compiled already when a session was opened from it (Program.sessionModel).
 */
public final class RuntimeCounters {
    private static final LongAdder LAUNCHES = new LongAdder();
    private static final LongAdder COMPILES = new LongAdder();
    private static final LongAdder CACHE_HITS = new LongAdder();

    private RuntimeCounters() {}

    /** {@code n} kernels launched (one forward's worth at a time). */
    public static void launched(long n) {
        LAUNCHES.add(nonNegative(n));
    }

    /** {@code n} kernels compiled (cache misses). */
    public static void compiled(long n) {
        COMPILES.add(nonNegative(n));
    }

    /** {@code n} kernels found compiled in a cache. */
    public static void cacheHits(long n) {
        CACHE_HITS.add(nonNegative(n));
    }

    /** Kernels launched in this process so far. */
    public static long launches() {
        return LAUNCHES.sum();
    }

    /** Kernels compiled in this process so far. */
    public static long compiles() {
        return COMPILES.sum();
    }

    /** Kernels found compiled in a cache in this process so far. */
    public static long cacheHits() {
        return CACHE_HITS.sum();
    }

    private static long nonNegative(long n) {
        if (n < 0) {
            throw new IllegalArgumentException("a running total only grows: got " + n);
        }
        return n;
    }
}
