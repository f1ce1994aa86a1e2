package dev.lantern.runtime.cpu;

import dev.lantern.runtime.Device;
import dev.lantern.runtime.Event;
import dev.lantern.runtime.Stream;
import dev.lantern.runtime.TensorStorage;

/**
 * The CPU as a {@link Device}. Work is synchronous: a stream runs each call to completion before
 * returning, so streams are trivially ordered, events complete when recorded, and
 * {@link #synchronize()} has nothing to wait for. Memory comes straight from Arenas (no cache:
 * the JVM and the C library already cache host memory).
 */
public final class CpuDevice implements Device {
    private final CpuStream defaultStream = new CpuStream(this, false);

    @Override
    public String name() {
        return "cpu";
    }

    @Override
    public String description() {
        Runtime rt = Runtime.getRuntime();
        return "CPU (" + rt.availableProcessors() + " cores, " + (rt.maxMemory() >> 20) + " MiB max heap)";
    }

    /** The JVM's max heap: the figure that bounds what Lantern itself can hold on the CPU. */
    @Override
    public long totalMemory() {
        return Runtime.getRuntime().maxMemory();
    }

    @Override
    public long freeMemory() {
        Runtime rt = Runtime.getRuntime();
        return rt.maxMemory() - (rt.totalMemory() - rt.freeMemory());
    }

    @Override
    public Stream newStream(boolean highPriority) {
        return new CpuStream(this, highPriority);
    }

    @Override
    public Stream defaultStream() {
        return defaultStream;
    }

    @Override
    public Event newEvent(boolean timing) {
        return new CpuEvent(timing);
    }

    @Override
    public TensorStorage allocate(long bytes) {
        return new CpuStorage(this, bytes);
    }

    @Override
    public void synchronize() {
        // Nothing is ever queued.
    }

    @Override
    public void close() {
    }

    @Override
    public String toString() {
        return description();
    }
}
