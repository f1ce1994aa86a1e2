package dev.lantern.cuda.gpu;

import dev.lantern.runtime.Device;
import dev.lantern.runtime.TensorStorage;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** Plain pageable native memory, standing in for a CPU device's storage in copy tests. */
final class HostBuffer implements TensorStorage {
    private final Arena arena = Arena.ofShared();
    private final MemorySegment seg;

    HostBuffer(long bytes) {
        seg = arena.allocate(bytes, 64);
    }

    @Override
    public Device device() {
        return null;
    }

    @Override
    public long bytes() {
        return seg.byteSize();
    }

    @Override
    public long address() {
        return seg.address();
    }

    @Override
    public MemorySegment hostSegment() {
        return seg;
    }

    @Override
    public void close() {
        arena.close();
    }
}
