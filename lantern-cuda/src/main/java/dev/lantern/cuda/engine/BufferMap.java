package dev.lantern.cuda.engine;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaSegmentSource;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.driver.StreamTailSync;
import dev.lantern.cuda.lower.Buf;
import dev.lantern.plan.MemoryPlan;
import dev.lantern.runtime.alloc.Allocation;
import dev.lantern.runtime.alloc.AllocatorConfig;
import dev.lantern.runtime.alloc.CachingAllocator;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Where every buffer a step names lives, and how much room is behind each address: inputs and
 * parameters (one allocation each, for the session), the arena that the core's memory plan lays
 * out (compiled), eager activations (allocated and freed per op), the scratch buffers and the
 * transient area of the lowering, and the cuBLASLt workspace. All memory comes from one caching
 * allocator whose free markers complete only when the stream has drained ({@link StreamTailSync}:
 * the allocator unmaps free tails on the host while queued kernels may still read them).
 */
final class BufferMap implements AutoCloseable {
    private final CudaSegmentSource source;
    private final CachingAllocator alloc;
    private final long streamId;
    private final Map<String, Allocation> values = new HashMap<>(); // inputs, params, eager activations
    private final Map<String, Allocation> scratch = new HashMap<>();
    private final Set<String> persistent = new HashSet<>();
    private final List<Allocation> fixed = new ArrayList<>(); // freed at close
    private final MemoryPlan plan;
    private final Map<String, MemoryPlan.Placement> placements;
    private final Allocation workspace;
    private Allocation arena;
    private Allocation transientArea;
    private long peakAllocated;

    BufferMap(CudaDevice device, CudaStream stream, MemoryPlan plan) {
        this.source = new CudaSegmentSource(device);
        this.alloc = new CachingAllocator(source, new StreamTailSync().add(stream), AllocatorConfig.defaults());
        this.streamId = stream.handle();
        this.plan = plan;
        this.placements = plan.byValue();
        this.workspace = fixed(GemmPlans.WORKSPACE_BYTES);
    }

    /** Memory from the caching allocator on the session's stream (at least 256 B). */
    Allocation allocate(long bytes) {
        Allocation a = alloc.allocate(Math.max(bytes, 256), streamId);
        peakAllocated = Math.max(peakAllocated, alloc.stats().allocated());
        return a;
    }

    void free(Allocation a) {
        alloc.free(a);
    }

    /** Memory held until {@link #close}: long-lived, so not rounded up to a reusable size class. */
    Allocation fixed(long bytes) {
        Allocation a = alloc.allocate(Math.max(bytes, 256), streamId, true);
        peakAllocated = Math.max(peakAllocated, alloc.stats().allocated());
        fixed.add(a);
        return a;
    }

    /** A graph input's or parameter's own allocation, for the session. */
    Allocation persistentValue(String value, long bytes) {
        Allocation a = fixed(bytes);
        values.put(value, a);
        persistent.add(value);
        return a;
    }

    boolean isPersistent(String value) {
        return persistent.contains(value);
    }

    /**
     * Memory for {@code program}'s scratch buffers and transient area (grown when a program
     * compiled again after autotuning needs more) and, for a compiled forward, the arena.
     */
    void layout(CudaProgram program, boolean withArena) {
        for (Buf b : program.lowered().scratch()) {
            Allocation have = scratch.get(b.name());
            if (have == null || have.size() < b.bytes()) {
                scratch.put(b.name(), fixed(b.bytes()));
            }
        }
        long t = Math.max(program.lowered().transientBytes(), 256);
        if (transientArea == null || transientArea.size() < t) {
            transientArea = fixed(t);
        }
        if (withArena && arena == null) {
            arena = fixed(Math.max(plan.arenaBytes(), 256));
        }
    }

    Allocation value(String value) {
        return values.get(value);
    }

    void putValue(String value, Allocation a) {
        values.put(value, a);
    }

    Allocation removeValue(String value) {
        return values.remove(value);
    }

    Allocation workspace() {
        return workspace;
    }

    /** The scratch, transient and arena memory: what {@code poison} fills. */
    List<Allocation> planned() {
        List<Allocation> all = new ArrayList<>(scratch.values());
        all.add(transientArea);
        if (arena != null) {
            all.add(arena);
        }
        return all;
    }

    long address(Buf b) {
        return switch (b.kind()) {
            case TRANSIENT -> transientArea.address() + b.offset();
            case SCRATCH -> scratch.get(b.name()).address();
            case VALUE -> addressOf(b.name());
        };
    }

    /** Bytes from {@code address} (inside {@code b}'s memory) to the end of the memory backing {@code b}. */
    long room(Buf b, long address) {
        return switch (b.kind()) {
            case TRANSIENT -> transientArea.address() + transientArea.size() - address;
            case SCRATCH -> scratch.get(b.name()).address() + scratch.get(b.name()).size() - address;
            case VALUE -> {
                Allocation a = values.get(b.name());
                if (a != null) {
                    yield a.address() + a.size() - address;
                }
                MemoryPlan.Placement p = placements.get(b.name());
                yield p == null || arena == null ? 0
                        : Math.min(arena.address() + p.offset() + p.buffer().bytes(), arena.address() + arena.size()) - address;
            }
        };
    }

    /** Where {@code value} lives: its own allocation, or its place in the arena. */
    long addressOf(String value) {
        Allocation a = values.get(value);
        if (a != null) {
            return a.address();
        }
        if (arena == null) {
            throw new IllegalStateException("value %" + value + " is not allocated in this eager run");
        }
        return arena.address() + plan.offset(value);
    }

    /** The most bytes held from the allocator at once. */
    long peakBytes() {
        return Math.max(peakAllocated, alloc.stats().allocated());
    }

    /** Frees everything (call after the stream has drained). */
    @Override
    public void close() {
        fixed.forEach(alloc::free);
        fixed.clear();
        alloc.emptyCache();
        source.close();
    }
}
