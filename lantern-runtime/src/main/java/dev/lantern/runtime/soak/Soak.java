package dev.lantern.runtime.soak;

import dev.lantern.runtime.alloc.AllocatorConfig;
import dev.lantern.runtime.alloc.AllocatorStats;
import dev.lantern.runtime.alloc.CachingAllocator;
import dev.lantern.runtime.alloc.SegmentSource;
import dev.lantern.runtime.alloc.SimulatedSegmentSource;
import dev.lantern.runtime.alloc.SimulatedStreamSync;
import dev.lantern.runtime.alloc.StreamSync;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The allocator soak: transformer-shaped and random allocation traffic over several streams,
 * operation by operation, with the allocator's statistics sampled as it goes.
 *
 * <p>The traffic is four agents, agent k on stream {@code k % streams}: a training step
 * ({@link TrainingAgent}, weight 4), KV-cache decoding ({@link DecodeAgent}, weight 3), small
 * scratch buffers ({@link ScratchAgent}, weight 2) and unstructured random blocks
 * ({@link RandomAgent}, weight 1). Each iteration picks an agent by weight from the seeded
 * random source and lets it perform one operation. At the end every held block is freed, the
 * cache emptied, and whatever the source still has outstanding is reported as leaked.
 */
public final class Soak {
    private static final int[] WEIGHTS = {4, 3, 2, 1};
    private static final int CLOCK_EVERY = 1024;
    /** Simulated markers complete this many operations after they are recorded (the device runs behind the host). */
    static final long MARKER_LATENCY = 64;

    private Soak() {
    }

    /** Called from the soak's thread about every 65k operations. */
    @FunctionalInterface
    public interface Progress {
        void at(long ops, long elapsedNanos);

        Progress NONE = (ops, elapsed) -> { };
    }

    public static SoakReport run(SoakOptions options) {
        return run(options, Progress.NONE);
    }

    public static SoakReport run(SoakOptions o, Progress progress) {
        return run(o, progress, stats -> { });
    }

    /**
     * The soak, handing every allocator sample (each {@link SoakOptions#sampleEvery()} operations,
     * on the soak's thread) to {@code samples} as well: a metrics exporter's view of the allocator.
     */
    public static SoakReport run(SoakOptions o, Progress progress, java.util.function.Consumer<AllocatorStats> samples) {
        SegmentSource base = o.source() != null ? o.source()
                : new SimulatedSegmentSource(o.device(), o.simCapacity(), 2 * AllocatorConfig.MiB);
        CountingSource source = new CountingSource(base);
        SimulatedStreamSync simSync = o.sync() == null ? new SimulatedStreamSync(MARKER_LATENCY) : null;
        StreamSync sync = o.sync() != null ? o.sync() : simSync;
        CachingAllocator allocator = new CachingAllocator(source, sync, o.config());
        Traffic traffic = new Traffic(allocator, new SplittableRandom(o.seed()), simSync, o.streams());
        List<Agent> agents = List.of(new TrainingAgent(0), new DecodeAgent(1 % o.streams()),
                new ScratchAgent(2 % o.streams()), new RandomAgent(3 % o.streams()));
        int weightSum = 0;
        for (int w : WEIGHTS) {
            weightSum += w;
        }

        PctHistogram frag = new PctHistogram();
        PctHistogram waste = new PctHistogram();
        long start = System.nanoTime();
        long deadline = o.seconds() > 0 ? start + (long) (o.seconds() * 1e9) : Long.MAX_VALUE;
        long nextSample = o.sampleEvery();
        long nextProgress = 1 << 16;
        for (long i = 0; ; i++) {
            if (o.maxOps() > 0 && traffic.ops() >= o.maxOps()) {
                break;
            }
            if (i % CLOCK_EVERY == 0 && System.nanoTime() >= deadline) {
                break;
            }
            int pick = traffic.rng.nextInt(weightSum);
            int k = 0;
            while (pick >= WEIGHTS[k]) {
                pick -= WEIGHTS[k++];
            }
            agents.get(k).step(traffic);
            if (traffic.ops() >= nextSample) {
                AllocatorStats s = allocator.stats();
                frag.add(s.allocFragPct());
                waste.add(s.wastePct());
                samples.accept(s);
                nextSample += o.sampleEvery();
            }
            if (traffic.ops() >= nextProgress) {
                progress.at(traffic.ops(), System.nanoTime() - start);
                nextProgress += 1 << 16;
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;

        for (Agent a : agents) {
            a.releaseAll(traffic);
        }
        allocator.emptyCache(); // waits for every pending marker, then releases every free segment
        long leaked = source.liveBytes();
        AllocatorStats end = allocator.stats();
        samples.accept(end);
        if (base instanceof AutoCloseable c && o.source() == null) {
            close(c);
        }
        return new SoakReport(traffic.ops(), seconds, frag.median(), frag.max(), waste.median(), leaked,
                end.retries(), end.ooms(), traffic.digestHex(), o.device(), frag.count(), source.peakBytes(),
                o.seed());
    }

    private static void close(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            throw new IllegalStateException("closing the segment source", e);
        }
    }
}
