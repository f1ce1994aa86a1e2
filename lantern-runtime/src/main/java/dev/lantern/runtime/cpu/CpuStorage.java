package dev.lantern.runtime.cpu;

import dev.lantern.runtime.Device;
import dev.lantern.runtime.TensorStorage;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Host memory from its own shared Arena, 64-byte aligned (one cache line, and a whole AVX-512
 * vector), zero-filled by the Arena. Closing frees it; a closed storage's segment throws on use.
 */
public final class CpuStorage implements TensorStorage {
    public static final long ALIGNMENT = 64;

    private final CpuDevice device;
    private final Arena arena;
    private final MemorySegment segment;

    CpuStorage(CpuDevice device, long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("cannot allocate " + bytes + " bytes");
        }
        this.device = device;
        this.arena = Arena.ofShared();
        this.segment = arena.allocate(bytes, ALIGNMENT);
    }

    @Override
    public Device device() {
        return device;
    }

    @Override
    public long bytes() {
        return segment.byteSize();
    }

    @Override
    public long address() {
        return segment.address();
    }

    @Override
    public MemorySegment hostSegment() {
        return segment;
    }

    @Override
    public synchronized void close() {
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}
