package dev.lantern.runtime.cpu;

import dev.lantern.runtime.Event;

/**
 * A CPU event: recording stamps {@link System#nanoTime()}; since CPU work is synchronous the
 * event is complete as soon as it is recorded. An event never recorded counts as complete, as
 * on CUDA.
 */
public final class CpuEvent implements Event {
    private final boolean timing;
    private volatile long recordedNanos = Long.MIN_VALUE;

    CpuEvent(boolean timing) {
        this.timing = timing;
    }

    void recordNow() {
        recordedNanos = System.nanoTime();
    }

    public boolean timing() {
        return timing;
    }

    @Override
    public boolean isComplete() {
        return true;
    }

    @Override
    public void synchronize() {
    }

    @Override
    public float elapsedMillisSince(Event start) {
        if (!(start instanceof CpuEvent s)) {
            throw new IllegalArgumentException("a CPU event can be timed against a CPU event only");
        }
        if (!timing || !s.timing) {
            throw new IllegalStateException("elapsed time needs two timing events (newEvent(true))");
        }
        if (recordedNanos == Long.MIN_VALUE || s.recordedNanos == Long.MIN_VALUE) {
            throw new IllegalStateException("elapsed time needs both events recorded");
        }
        return (float) ((recordedNanos - s.recordedNanos) / 1e6);
    }

    @Override
    public void close() {
    }
}
