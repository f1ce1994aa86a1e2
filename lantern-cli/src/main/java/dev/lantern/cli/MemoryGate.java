package dev.lantern.cli;

import dev.lantern.runtime.alloc.Allocation;
import dev.lantern.runtime.alloc.AllocatorConfig;
import dev.lantern.runtime.alloc.CachingAllocator;
import dev.lantern.runtime.alloc.SimulatedSegmentSource;
import dev.lantern.runtime.alloc.SimulatedStreamSync;
import dev.lantern.runtime.soak.Soak;
import dev.lantern.runtime.soak.SoakOptions;
import dev.lantern.runtime.soak.SoakReport;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * {@code lantern gate memory}: the allocator soak on the simulator (the plan's gate: at least
 * {@link SoakReport#MIN_OPS} operations, median fragmentation at most 15 %, no byte leaked), then a
 * random-shape leak check: seeded allocations of every size from a byte to 64 MiB over four streams,
 * in fixed and in expandable segments, each freed in random order, the cache emptied, and the
 * simulated device's live bytes read: 0, or the gate fails. The soak's JSON line is printed first,
 * for the record. {@link #leakCheck}'s {@code forget} leaves allocations unfreed, which a test uses
 * to show the gate failing on a leak.
 */
final class MemoryGate {
    static final String USAGE = "gate memory [--seconds N] [--seed S]";
    static final double MAX_FRAG_PCT = 15.0;

    /** What the leak check saw: allocations made, live bytes and segments left at the source after the cache was emptied. */
    record Leak(long allocations, long liveBytes, int liveSegments) {}

    private MemoryGate() {}

    static int run(List<String> argv, PrintStream out, PrintStream err) {
        Args a = Args.parse("gate memory", argv, Set.of(), Set.of("seconds", "seed")).noPositional("gate memory");
        double seconds = a.getInt("gate memory", "seconds", 60, 1, 86_400);
        long seed = a.getLong("gate memory", "seed", 1);
        SoakReport soak = Soak.run(SoakOptions.sim(seconds, seed));
        out.println(soak.toJson());
        List<Leak> leaks = List.of(leakCheck(seed, 20_000, 0, false), leakCheck(seed + 1, 20_000, 0, true));
        GateResult g = evaluate(soak, leaks);
        out.println(g.line());
        return g.exitCode();
    }

    static GateResult evaluate(SoakReport soak, List<Leak> leaks) {
        long leaked = leaks.stream().mapToLong(Leak::liveBytes).sum();
        long allocations = leaks.stream().mapToLong(Leak::allocations).sum();
        String figure = String.format(Locale.ROOT, "soak %.0f s on %s: %d ops, median frag %.2f%% (<= %.0f%%), %d bytes leaked; "
                        + "random-shape check: %d allocations, %d live bytes after free and emptyCache",
                soak.seconds(), soak.device(), soak.ops(), soak.allocFragPctMedian(), MAX_FRAG_PCT, soak.leakedBytes(), allocations, leaked);
        List<String> why = new ArrayList<>();
        if (!soak.ranEnough()) {
            why.add("too few soak operations (at least " + SoakReport.MIN_OPS + ")");
        }
        if (soak.allocFragPctMedian() > MAX_FRAG_PCT) {
            why.add("fragmentation over the limit");
        }
        if (soak.leakedBytes() != 0) {
            why.add("the soak leaked");
        }
        if (leaked != 0) {
            why.add("the random-shape check leaked");
        }
        return new GateResult("memory", why.isEmpty(), figure + (why.isEmpty() ? "" : ": " + String.join(", ", why)));
    }

    /**
     * {@code count} allocations of log-uniform sizes (1 B to 64 MiB) on four streams, at most 256 held at
     * once, freed in random order; then every held one is freed except the last {@code forget}, the
     * cache emptied, and the source's live bytes returned.
     */
    static Leak leakCheck(long seed, int count, int forget, boolean expandable) {
        SimulatedSegmentSource source = new SimulatedSegmentSource("sim", 64 * AllocatorConfig.GiB, 2 * AllocatorConfig.MiB);
        SimulatedStreamSync sync = new SimulatedStreamSync(8);
        AllocatorConfig config = AllocatorConfig.defaults();
        if (expandable) {
            config = config.withExpandableSegments(true);
        }
        CachingAllocator allocator = new CachingAllocator(source, sync, config);
        SplittableRandom rng = new SplittableRandom(seed);
        List<Allocation> held = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            if (held.size() >= 256 || (!held.isEmpty() && rng.nextInt(3) == 0)) {
                allocator.free(held.remove(rng.nextInt(held.size())));
            }
            long bytes = Math.max(1, (long) Math.exp(rng.nextDouble() * Math.log(64.0 * AllocatorConfig.MiB)));
            held.add(allocator.allocate(bytes, rng.nextInt(4)));
            sync.tick(1);
        }
        for (Allocation x : held.subList(0, Math.max(0, held.size() - forget))) {
            allocator.free(x);
        }
        sync.drain();
        allocator.emptyCache();
        return new Leak(count, source.liveBytes(), source.liveSegments());
    }
}
