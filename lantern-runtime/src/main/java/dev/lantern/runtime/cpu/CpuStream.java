package dev.lantern.runtime.cpu;

import dev.lantern.runtime.Device;
import dev.lantern.runtime.Event;
import dev.lantern.runtime.Stream;
import dev.lantern.runtime.TensorStorage;
import java.lang.foreign.MemorySegment;

/**
 * A CPU stream: each call runs at once on the caller's thread, so work is in order by
 * construction. {@link #waitFor} therefore only checks that the event was recorded (waiting on
 * an event that was never recorded is a no-op, as on CUDA).
 */
public final class CpuStream implements Stream {
    private final CpuDevice device;
    private final boolean highPriority;

    CpuStream(CpuDevice device, boolean highPriority) {
        this.device = device;
        this.highPriority = highPriority;
    }

    @Override
    public Device device() {
        return device;
    }

    @Override
    public boolean highPriority() {
        return highPriority;
    }

    @Override
    public void waitFor(Event event) {
        cpuEvent(event);
    }

    @Override
    public void record(Event event) {
        cpuEvent(event).recordNow();
    }

    /** Copies with {@link MemorySegment#copy}; overlapping ranges behave as memmove. */
    @Override
    public void copy(TensorStorage src, long srcOffset, TensorStorage dst, long dstOffset, long bytes) {
        MemorySegment from = src.hostSegment();
        MemorySegment to = dst.hostSegment();
        if (from == null || to == null) {
            throw new IllegalArgumentException("the CPU stream copies host-visible memory only; "
                    + (from == null ? "source on " + src.device().name() : "destination on " + dst.device().name())
                    + " is not host-visible");
        }
        if (bytes < 0 || srcOffset < 0 || dstOffset < 0 || srcOffset + bytes > from.byteSize()
                || dstOffset + bytes > to.byteSize()) {
            throw new IndexOutOfBoundsException("copy of " + bytes + " bytes from offset " + srcOffset + " of "
                    + from.byteSize() + " to offset " + dstOffset + " of " + to.byteSize());
        }
        MemorySegment.copy(from, srcOffset, to, dstOffset, bytes);
    }

    @Override
    public void synchronize() {
    }

    @Override
    public void close() {
    }

    private static CpuEvent cpuEvent(Event event) {
        if (event instanceof CpuEvent e) {
            return e;
        }
        throw new IllegalArgumentException("a CPU stream takes CPU events, got " + event.getClass().getName());
    }
}
