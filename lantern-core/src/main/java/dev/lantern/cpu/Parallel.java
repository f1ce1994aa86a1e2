package dev.lantern.cpu;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;

/**
 * The backend's one worker pool ({@link CpuConfig#THREADS} − 1 daemon workers plus the caller) and
 * its only loop: {@link #forEach} hands task indices out from a shared counter, so uneven tasks
 * balance themselves. A call from inside a worker runs inline: kernels never nest parallelism.
 */
public final class Parallel {
    private Parallel() {}

    private static final ForkJoinPool POOL = CpuConfig.THREADS > 1
            ? new ForkJoinPool(CpuConfig.THREADS - 1, pool -> {
                var t = ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(pool);
                t.setName("lantern-cpu-" + t.getPoolIndex());
                t.setDaemon(true);
                return t;
            }, null, false)
            : null;

    private static final ThreadLocal<Boolean> INSIDE = ThreadLocal.withInitial(() -> false);

    /** Runs {@code body.accept(i)} for every i in [0, tasks), spread over the pool; returns when all are done. */
    public static void forEach(int tasks, IntConsumer body) {
        if (tasks <= 0) {
            return;
        }
        if (POOL == null || tasks == 1 || INSIDE.get()) {
            for (int i = 0; i < tasks; i++) {
                body.accept(i);
            }
            return;
        }
        AtomicInteger next = new AtomicInteger();
        Runnable drain = () -> {
            boolean was = INSIDE.get();
            INSIDE.set(true);
            try {
                for (int i = next.getAndIncrement(); i < tasks; i = next.getAndIncrement()) {
                    body.accept(i);
                }
            } finally {
                INSIDE.set(was);
            }
        };
        int helpers = Math.min(tasks, CpuConfig.THREADS) - 1;
        ForkJoinTask<?>[] forks = new ForkJoinTask<?>[helpers];
        for (int h = 0; h < helpers; h++) {
            forks[h] = POOL.submit(drain);
        }
        drain.run();
        for (ForkJoinTask<?> f : forks) {
            f.join();
        }
    }

    /** Splits [0, n) into about {@code n / grain} ranges (at most a few per thread) and runs each. */
    public static void forRange(long n, long grain, RangeBody body) {
        if (n <= 0) {
            return;
        }
        long chunks = Math.max(1, Math.min((n + grain - 1) / Math.max(1, grain), 4L * CpuConfig.THREADS));
        long step = (n + chunks - 1) / chunks;
        int tasks = (int) ((n + step - 1) / step);
        forEach(tasks, t -> body.run(t * step, Math.min(n, (t + 1) * step)));
    }

    /** A half-open range [start, end) of work. */
    @FunctionalInterface
    public interface RangeBody {
        void run(long start, long end);
    }
}
