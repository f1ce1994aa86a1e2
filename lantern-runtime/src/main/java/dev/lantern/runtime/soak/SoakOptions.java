package dev.lantern.runtime.soak;

import dev.lantern.runtime.alloc.AllocatorConfig;
import dev.lantern.runtime.alloc.SegmentSource;
import dev.lantern.runtime.alloc.StreamSync;

/**
 * How to run a {@link Soak}. The run stops at whichever limit comes first: {@code seconds} of
 * wall time or {@code maxOps} allocator operations. Two runs with the same seed, options and a
 * deterministic source perform the same operations at the same addresses, as long as they are
 * bounded by {@code maxOps} (a time bound cuts them at different points).
 *
 * @param seconds       wall-clock limit (0: none)
 * @param maxOps        operation limit (0: none); at least one limit must be set
 * @param seed          seed of the traffic's SplittableRandom
 * @param streams       stream ids 0..streams-1 the traffic is spread over
 * @param device        a label for the report: "sim", "cuda"
 * @param source        where segments come from; null: a {@code SimulatedSegmentSource} of {@code simCapacity}
 * @param sync          stream markers; null: simulated markers driven by the traffic
 * @param simCapacity   capacity of the simulated source in bytes
 * @param sampleEvery   allocator statistics are sampled every this many operations
 * @param config        the allocator's size classes and rules
 */
public record SoakOptions(double seconds, long maxOps, long seed, int streams, String device, SegmentSource source,
        StreamSync sync, long simCapacity, int sampleEvery, AllocatorConfig config) {

    public static final long DEFAULT_SIM_CAPACITY = 16 * AllocatorConfig.GiB;

    public SoakOptions {
        if (!(seconds >= 0) || maxOps < 0 || (seconds == 0 && maxOps == 0)) {
            throw new IllegalArgumentException("a soak needs seconds > 0 or maxOps > 0, got " + seconds + " s, "
                    + maxOps + " ops");
        }
        if (streams < 1 || streams > 64) {
            throw new IllegalArgumentException("streams must be in 1..64, got " + streams);
        }
        if (sampleEvery < 1) {
            throw new IllegalArgumentException("sampleEvery must be >= 1, got " + sampleEvery);
        }
    }

    /** A simulator run bounded by time. */
    public static SoakOptions sim(double seconds, long seed) {
        return new SoakOptions(seconds, 0, seed, 4, "sim", null, null, DEFAULT_SIM_CAPACITY, 256,
                AllocatorConfig.defaults());
    }

    /** A simulator run of exactly {@code maxOps} operations: the deterministic form. */
    public static SoakOptions simOps(long maxOps, long seed) {
        return new SoakOptions(0, maxOps, seed, 4, "sim", null, null, DEFAULT_SIM_CAPACITY, 256,
                AllocatorConfig.defaults());
    }

    public SoakOptions withSource(String deviceLabel, SegmentSource newSource, StreamSync newSync) {
        return new SoakOptions(seconds, maxOps, seed, streams, deviceLabel, newSource, newSync, simCapacity,
                sampleEvery, config);
    }

    public SoakOptions withLimits(double newSeconds, long newMaxOps) {
        return new SoakOptions(newSeconds, newMaxOps, seed, streams, device, source, sync, simCapacity, sampleEvery,
                config);
    }

    public SoakOptions withStreams(int n) {
        return new SoakOptions(seconds, maxOps, seed, n, device, source, sync, simCapacity, sampleEvery, config);
    }

    public SoakOptions withConfig(AllocatorConfig c) {
        return new SoakOptions(seconds, maxOps, seed, streams, device, source, sync, simCapacity, sampleEvery, c);
    }

    public SoakOptions withSimCapacity(long bytes) {
        return new SoakOptions(seconds, maxOps, seed, streams, device, source, sync, bytes, sampleEvery, config);
    }
}
