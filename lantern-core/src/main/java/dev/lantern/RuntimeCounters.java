package dev.lantern;

/**
 * Where the CUDA backend adds its launches, compiles and module-cache hits: the running totals are
 * {@link dev.lantern.trace.RuntimeCounters}' (the CPU engine adds to those directly, so that
 * {@code dev.lantern.engine} does not depend on this package, which depends on it). This entry point
 * stays because the CUDA code that calls it was measured on the H200 as it is (its stored benchmark
 * results are tied to the newest change under lantern-cuda/src/main); a later change there may call
 * the trace package directly and this class can go.
 */
public final class RuntimeCounters {
    private RuntimeCounters() {}

    /** {@code n} kernels launched (one forward's worth at a time). */
    public static void launched(long n) {
        dev.lantern.trace.RuntimeCounters.launched(n);
    }

    /** {@code n} kernels compiled (cache misses). */
    public static void compiled(long n) {
        dev.lantern.trace.RuntimeCounters.compiled(n);
    }

    /** {@code n} kernels found compiled in a cache. */
    public static void cacheHits(long n) {
        dev.lantern.trace.RuntimeCounters.cacheHits(n);
    }
}
