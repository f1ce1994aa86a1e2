package dev.lantern.runtime.soak;

import java.util.Locale;

/**
 * What a soak measured.
 *
 * @param ops                 allocator operations (allocations + frees) performed by the traffic
 * @param seconds             wall time of the traffic loop
 * @param allocFragPctMedian  median over samples of 100 × (1 − largest free block ÷ free bytes)
 * @param allocFragPctMax     its maximum
 * @param wastePctMedian      median over samples of 100 × (1 − allocated ÷ reserved)
 * @param leakedBytes         bytes still reserved at the source after everything was freed and the cache emptied
 * @param oomRetries          reservations refused by the source and retried after freeing the cache
 * @param ooms                typed OOM errors (the traffic drops its state and goes on)
 * @param placementDigest     SHA-256 (hex) over every (op, address, size)
 * @param device              "sim", "cuda"
 * @param samples             statistics samples taken
 * @param peakReservedBytes   most bytes reserved at the source at once
 * @param seed                the traffic's seed
 */
public record SoakReport(long ops, double seconds, double allocFragPctMedian, double allocFragPctMax,
        double wastePctMedian, long leakedBytes, long oomRetries, long ooms, String placementDigest, String device,
        long samples, long peakReservedBytes, long seed) {

    /**
     * Fewest operations for the gates to mean anything: with none, the fragmentation median is 0 and
     * nothing leaks, so {@code --seconds 1e-300} would pass having tested nothing. 10,000 operations
     * give about 40 samples at the default sampling interval; one second on the simulator gives
     * far more.
     */
    public static final long MIN_OPS = 10_000;

    /** The soak's exit gates: enough operations to judge, no leak, and median fragmentation at most 15 %. */
    public boolean passes() {
        return ranEnough() && leakedBytes == 0 && allocFragPctMedian <= 15.0;
    }

    /** Whether the soak performed at least {@link #MIN_OPS} operations and took at least one sample. */
    public boolean ranEnough() {
        return ops >= MIN_OPS && samples > 0;
    }

    /** One JSON object on one line; keys in snake_case. */
    public String toJson() {
        return String.format(Locale.ROOT,
                "{\"ops\":%d,\"seconds\":%.3f,\"alloc_frag_pct_median\":%.2f,\"alloc_frag_pct_max\":%.2f,"
                        + "\"waste_pct_median\":%.2f,\"leaked_bytes\":%d,\"oom_retries\":%d,\"ooms\":%d,"
                        + "\"placement_digest\":\"%s\",\"device\":\"%s\",\"samples\":%d,\"peak_reserved_bytes\":%d,"
                        + "\"seed\":%d,\"pass\":%b}",
                ops, seconds, allocFragPctMedian, allocFragPctMax, wastePctMedian, leakedBytes, oomRetries, ooms,
                placementDigest, device.replace("\\", "\\\\").replace("\"", "\\\""), samples, peakReservedBytes, seed,
                passes());
    }

    /** A short table for people. */
    public String toTable() {
        return String.format(Locale.ROOT, """
                device               %s
                seed                 %d
                ops                  %d in %.1f s (%.0f ops/s)  (gate: >= %d)
                alloc_frag_pct       median %.2f, max %.2f  (gate: median <= 15)
                waste_pct            median %.2f
                leaked_bytes         %d  (gate: 0)
                oom_retries / ooms   %d / %d
                peak reserved        %d bytes
                samples              %d
                placement digest     %s
                result               %s
                """, device, seed, ops, seconds, seconds > 0 ? ops / seconds : 0.0, MIN_OPS, allocFragPctMedian,
                allocFragPctMax, wastePctMedian, leakedBytes, oomRetries, ooms, peakReservedBytes, samples,
                placementDigest, passes() ? "PASS" : "FAIL");
    }
}
