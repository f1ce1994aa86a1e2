package dev.lantern.cli;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * CPU time over the timed segments of one side of {@code bench overhead}: the whole process's and
 * the stepping thread's, against the segments' wall time, so that the report can say how much of
 * the machine the step had and how much went elsewhere (the metrics server, a client, the JIT, GC);
 * and the heap the process allocated and the collections that stopped it, which stop the step too;
 * and, on Linux, the stepping thread's time waiting for a core, its moves between cores and the core
 * each segment ended on, and the machine's steal time ({@link ThreadSched}).
 */
final class SegmentCpu {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private long wallNanos;
    private long processNanos;
    private long threadNanos;
    private long allocatedBytes;
    private long collections;
    private long collectionMillis;
    private long waitNanos;
    private long stealTicks;
    private final java.util.List<Integer> segmentCores = new java.util.ArrayList<>();
    private final java.util.List<Long> segmentMigrations = new java.util.ArrayList<>();
    private final boolean perStep;
    private final java.util.List<Double> segmentMedians = new java.util.ArrayList<>();

    /** {@code perStep}: the caller also times each step's thread CPU and hands in each segment's median. */
    SegmentCpu(boolean perStep) {
        this.perStep = perStep;
    }

    boolean perStep() {
        return perStep;
    }

    /** The process's CPU nanoseconds so far (all threads), or -1 where the JVM does not say. */
    static long processNanos() {
        return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
                ? os.getProcessCpuTime() : -1;
    }

    /** The calling thread's CPU nanoseconds so far. */
    static long threadNanos() {
        return THREADS.getCurrentThreadCpuTime();
    }

    /** The counters at one moment: {@link #add} takes two, a segment's start and end. */
    record Mark(long wall, long process, long thread, long allocated, long collections, long collectionMillis, ThreadSched sched) {
        static Mark now() {
            long n = 0;
            long ms = 0;
            for (var gc : ManagementFactory.getGarbageCollectorMXBeans()) {
                n += Math.max(0, gc.getCollectionCount());
                ms += Math.max(0, gc.getCollectionTime());
            }
            long allocated = THREADS instanceof com.sun.management.ThreadMXBean t ? t.getTotalThreadAllocatedBytes() : -1;
            return new Mark(System.nanoTime(), processNanos(), threadNanos(), allocated, n, ms, ThreadSched.now());
        }
    }

    /** One segment, from {@code start} to {@code end} (marks taken on the stepping thread), and its median step thread CPU ms (NaN when not timed). */
    void add(Mark start, Mark end, double medianStepCpuMs) {
        wallNanos += end.wall() - start.wall();
        processNanos += end.process() - start.process();
        threadNanos += end.thread() - start.thread();
        allocatedBytes += end.allocated() - start.allocated();
        collections += end.collections() - start.collections();
        collectionMillis += end.collectionMillis() - start.collectionMillis();
        ThreadSched d = end.sched().since(start.sched());
        waitNanos = waitNanos < 0 || d.waitNanos() < 0 ? -1 : waitNanos + d.waitNanos();
        stealTicks = stealTicks < 0 || d.stealTicks() < 0 ? -1 : stealTicks + d.stealTicks();
        segmentCores.add(d.cpu());
        segmentMigrations.add(d.migrations());
        if (perStep) {
            segmentMedians.add(medianStepCpuMs);
        }
    }

    /** Each segment's median step thread CPU time in ms, in the order they ran. */
    double[] segmentMedians() {
        return segmentMedians.stream().mapToDouble(Double::doubleValue).toArray();
    }

    double wallSeconds() {
        return wallNanos / 1e9;
    }

    /** CPU seconds the process used per second of segment (2.0 = two cores busy); NaN without segments. */
    double processPerSecond() {
        return wallNanos > 0 && processNanos >= 0 ? (double) processNanos / wallNanos : Double.NaN;
    }

    /** MB of heap the whole process allocated per second of segment (the JVM's own count). */
    double allocatedMbPerSecond() {
        return wallNanos > 0 ? allocatedBytes / 1e6 / (wallNanos / 1e9) : Double.NaN;
    }

    /** Garbage collections that ran during the segments, and the milliseconds they took (the collectors' own count). */
    long collections() {
        return collections;
    }

    long collectionMillis() {
        return collectionMillis;
    }

    /** Milliseconds per second of segment the stepping thread was runnable but waited for a core; NaN where unknown. */
    double waitMsPerSecond() {
        return wallNanos > 0 && waitNanos >= 0 ? waitNanos / 1e6 / (wallNanos / 1e9) : Double.NaN;
    }

    /** The hypervisor's steal time over the segments, in CPU seconds per second (all cores); NaN where unknown. */
    double stealPerSecond() {
        return wallNanos > 0 && stealTicks >= 0 ? stealTicks / 100.0 / (wallNanos / 1e9) : Double.NaN;
    }

    /** JSON arrays, in the order the segments ran: the core each ended on, and the stepping thread's moves between cores in it. */
    String placementJson(String side) {
        return String.format(java.util.Locale.ROOT, "\"%s_segment_core\": %s, \"%s_segment_migrations\": %s", side, segmentCores, side,
                segmentMigrations);
    }

    /** CPU seconds the stepping thread used per second of segment. */
    double stepThreadPerSecond() {
        return wallNanos > 0 ? (double) threadNanos / wallNanos : Double.NaN;
    }
}
