package dev.lantern.cpu;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntConsumer;

/**
 * The backend's one worker pool ({@link CpuConfig#THREADS} − 1 persistent daemon workers plus the
 * caller) and its only loop: {@link #forEach} publishes one job, and every thread takes task
 * indices from its shared counter, so uneven tasks balance themselves. A call from inside a worker
 * runs inline: kernels never nest parallelism.
 *
 * <p>No task object is created per call and no thread is started: a worker that finished a job
 * spins for {@link #SPIN} rounds waiting for the next (a forward is a few hundred calls, microseconds
 * apart), then parks until the next call unparks it. The pool runs one job at a time; a second
 * thread calling while a job runs (two executors on two threads) runs its tasks inline on its own
 * thread, since every core is busy already. Which thread runs which task changes no result: tasks
 * write disjoint outputs and no kernel splits a reduction across tasks.
 */
public final class Parallel {
    private Parallel() {}

    /** Idle spins before a worker parks (about 50 µs). */
    private static final int SPIN = 1 << 14;

    /** One {@link #forEach} call: tasks handed out from {@code next}; {@code done} counts finished ones. */
    private static final class Job {
        final int tasks;
        final IntConsumer body;
        final AtomicInteger next = new AtomicInteger();
        final AtomicInteger done = new AtomicInteger();
        volatile Throwable failure;

        Job(int tasks, IntConsumer body) {
            this.tasks = tasks;
            this.body = body;
        }

        void drain() {
            for (int i = next.getAndIncrement(); i < tasks; i = next.getAndIncrement()) {
                try {
                    if (failure == null) {
                        body.accept(i);
                    }
                } catch (Throwable t) {
                    if (failure == null) {
                        failure = t;
                    }
                } finally {
                    done.incrementAndGet();
                }
            }
        }
    }

    private static final ReentrantLock LOCK = new ReentrantLock();
    private static volatile Job current;
    /** Bumped per published job, so that a worker runs each job at most once. */
    private static volatile long generation;
    private static final Thread[] WORKERS = new Thread[CpuConfig.THREADS - 1];
    private static final boolean[] PARKED = new boolean[WORKERS.length];

    private static final ThreadLocal<Boolean> INSIDE = ThreadLocal.withInitial(() -> false);

    static {
        for (int w = 0; w < WORKERS.length; w++) {
            int id = w;
            Thread t = new Thread(() -> work(id), "lantern-cpu-" + w);
            t.setDaemon(true);
            WORKERS[w] = t;
            t.start();
        }
    }

    private static void work(int id) {
        INSIDE.set(true);
        long seen = 0;
        while (true) {
            int spins = 0;
            while (generation == seen) {
                if (spins++ < SPIN) {
                    Thread.onSpinWait();
                } else {
                    synchronized (PARKED) {
                        PARKED[id] = true;
                    }
                    if (generation == seen) {
                        LockSupport.park(Parallel.class);
                    }
                    synchronized (PARKED) {
                        PARKED[id] = false;
                    }
                }
            }
            seen = generation;
            Job job = current;
            if (job != null) {
                job.drain();
            }
        }
    }

    /** Runs {@code body.accept(i)} for every i in [0, tasks), spread over the pool; returns when all are done. */
    public static void forEach(int tasks, IntConsumer body) {
        if (tasks <= 0) {
            return;
        }
        if (WORKERS.length == 0 || tasks == 1 || INSIDE.get() || !LOCK.tryLock()) {
            for (int i = 0; i < tasks; i++) {
                body.accept(i);
            }
            return;
        }
        Job job = new Job(tasks, body);
        try {
            current = job;
            generation++;
            synchronized (PARKED) {
                for (int w = 0; w < WORKERS.length; w++) {
                    if (PARKED[w]) {
                        LockSupport.unpark(WORKERS[w]);
                    }
                }
            }
            INSIDE.set(true);
            try {
                job.drain();
            } finally {
                INSIDE.set(false);
            }
            // a worker may still run the last tasks it took; wait for them (microseconds)
            while (job.done.get() < tasks) {
                Thread.onSpinWait();
            }
            current = null;
        } finally {
            LOCK.unlock();
        }
        Throwable f = job.failure;
        if (f instanceof RuntimeException re) {
            throw re;
        } else if (f instanceof Error e) {
            throw e;
        } else if (f != null) {
            throw new IllegalStateException(f);
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
