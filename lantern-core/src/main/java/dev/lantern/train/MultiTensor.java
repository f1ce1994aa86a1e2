package dev.lantern.train;

import dev.lantern.cpu.CpuConfig;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntConsumer;

/**
 * The one pass over every parameter that each multi-tensor operation (an optimizer step, the
 * scaler's unscale, the clip) makes. The parameters' elements are cut into chunks of at most
 * {@link #CHUNK} elements, never across two tensors; the cut depends only on the tensors' sizes,
 * never on the thread count. Threads take chunks from a shared counter, and a reduction keeps one
 * partial per chunk and adds the partials in chunk order, so every result is bit-identical with 1
 * thread or 64.
 */
public final class MultiTensor {
    /** Elements per chunk: 64 KiB of f32, a few L2-resident streams per chunk. */
    public static final int CHUNK = 1 << 14;

    /** Elements [start, end) of parameter {@code param}. */
    public record Chunk(int param, long start, long end) {}

    /** The work on one chunk. */
    @FunctionalInterface
    public interface ChunkBody {
        /** Processes elements [start, end) of {@code params.get(param)}. */
        void run(Parameter p, int param, long start, long end);
    }

    private static final ForkJoinPool POOL = new ForkJoinPool(Math.max(1, Runtime.getRuntime().availableProcessors()), pool -> {
        var t = ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(pool);
        t.setName("lantern-train-" + t.getPoolIndex());
        t.setDaemon(true);
        return t;
    }, null, false);

    private final List<Parameter> params;
    private final List<Chunk> chunks;
    private final int threads;

    /** A plan over {@code params} (in this order) run on {@code threads} threads, the caller included. */
    public MultiTensor(List<Parameter> params, int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be at least 1, got " + threads);
        }
        this.params = List.copyOf(params);
        this.threads = threads;
        List<Chunk> cs = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < this.params.size(); i++) {
            Parameter p = this.params.get(i);
            if (!names.add(p.name())) {
                throw new TrainStateException("parameter " + p.name() + " appears twice");
            }
            for (long s = 0; s < p.numel(); s += CHUNK) {
                cs.add(new Chunk(i, s, Math.min(p.numel(), s + CHUNK)));
            }
        }
        this.chunks = List.copyOf(cs);
    }

    /** A plan on the CPU backend's thread count ({@code lantern.cpu.threads}). */
    public MultiTensor(List<Parameter> params) {
        this(params, CpuConfig.THREADS);
    }

    /** The parameters, in order. */
    public List<Parameter> params() {
        return params;
    }

    /** The chunks, in order (parameter by parameter, ascending within one). */
    public List<Chunk> chunks() {
        return chunks;
    }

    /** Threads used, the caller included. */
    public int threads() {
        return threads;
    }

    /** Runs {@code body} on every chunk; returns when all are done. */
    public void forEach(ChunkBody body) {
        forEachIndex(c -> {
            Chunk k = chunks.get(c);
            body.run(params.get(k.param()), k.param(), k.start(), k.end());
        });
    }

    /**
     * Runs {@code body} on every chunk and returns one value per chunk, in chunk order; the caller
     * combines them in that order, which is what makes a reduction independent of the threads.
     */
    public double[] map(ChunkFunction body) {
        double[] out = new double[chunks.size()];
        forEachIndex(c -> {
            Chunk k = chunks.get(c);
            out[c] = body.apply(params.get(k.param()), k.param(), k.start(), k.end());
        });
        return out;
    }

    /** A chunk's contribution to a reduction. */
    @FunctionalInterface
    public interface ChunkFunction {
        /** The value for elements [start, end) of {@code params.get(param)}. */
        double apply(Parameter p, int param, long start, long end);
    }

    private void forEachIndex(IntConsumer body) {
        int n = chunks.size();
        int helpers = Math.min(n, threads) - 1;
        if (helpers <= 0) {
            for (int i = 0; i < n; i++) {
                body.accept(i);
            }
            return;
        }
        // The caller waits for the chunks, not for the helpers: a helper that starts late (a busy
        // machine) finds nothing left and returns, and the caller does not wait for it to be scheduled.
        AtomicInteger next = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Runnable drain = () -> {
            for (int i = next.getAndIncrement(); i < n; i = next.getAndIncrement()) {
                try {
                    body.accept(i);
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                } finally {
                    done.incrementAndGet();
                }
            }
        };
        for (int h = 0; h < helpers; h++) {
            POOL.execute(drain);
        }
        drain.run();
        for (int spins = 0; done.get() < n; spins++) {
            if (spins < 1000) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(10_000);
            }
        }
        Throwable t = failure.get();
        if (t instanceof RuntimeException r) {
            throw r;
        } else if (t instanceof Error e) {
            throw e;
        } else if (t != null) {
            throw new IllegalStateException(t);
        }
    }
}
