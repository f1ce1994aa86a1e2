package dev.lantern.cli;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * CPU time over the timed segments of one side of {@code bench overhead}: the whole process's and
 * the stepping thread's, against the segments' wall time, so that the report can say how much of
 * the machine the step had and how much went elsewhere (the metrics server, a client, the JIT, GC).
 */
final class SegmentCpu {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private long wallNanos;
    private long processNanos;
    private long threadNanos;
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

    /** One segment: its wall, process and thread CPU nanoseconds, and its median step thread CPU ms (NaN when not timed). */
    void add(long wall, long process, long thread, double medianStepCpuMs) {
        wallNanos += wall;
        processNanos += process;
        threadNanos += thread;
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

    /** CPU seconds the stepping thread used per second of segment. */
    double stepThreadPerSecond() {
        return wallNanos > 0 ? (double) threadNanos / wallNanos : Double.NaN;
    }
}
