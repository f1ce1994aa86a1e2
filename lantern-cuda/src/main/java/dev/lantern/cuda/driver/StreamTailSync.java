package dev.lantern.cuda.driver;

import dev.lantern.runtime.alloc.StreamSync;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The allocator's markers for blocks used on {@link CudaStream}s: a marker is the stream's
 * synchronisation count when the block was freed, and it completes at the stream's next
 * {@link CudaStream#synchronize()} (await synchronises). No event is recorded per free, so eager
 * runs, which free after every op, pay nothing for it.
 *
 * <p>Why it exists: with expandable segments the allocator unmaps the free tail of a range on the
 * host (cuMemUnmap does not wait for the stream). A block freed while kernels queued before the
 * free still read it must not be unmapped until they have run; with
 * {@link StreamSync#SYNCHRONOUS} every marker was complete at once, and an eager forward of a
 * block whose activations fall in the 1–10 MiB range unmapped pages under queued kernels (issue
 * 12: {@code CUDA_ERROR_ILLEGAL_ADDRESS} at 3×1000×1536; docs/perf-notes.md).
 *
 * <p>Same-stream reuse needs no marker (the stream orders it); a block used on another stream is
 * handed to it only after a synchronisation ({@link #streamWait} is not offered).
 */
public final class StreamTailSync implements StreamSync {
    private final Map<Long, CudaStream> streams = new ConcurrentHashMap<>();

    /** Registers {@code stream} under its handle, the id the allocator is given. */
    public StreamTailSync add(CudaStream stream) {
        streams.put(stream.handle(), stream);
        return this;
    }

    @Override
    public Marker record(long streamId) {
        CudaStream s = streams.get(streamId);
        if (s == null) {
            throw new IllegalStateException("stream 0x" + Long.toHexString(streamId) + " is not registered with this allocator's sync");
        }
        long at = s.synchronizations();
        return new Marker() {
            // a lost or reset context runs nothing more: what was queued will never touch the block
            @Override
            public boolean isComplete() {
                return s.synchronizations() > at || s.generation().isUnusable();
            }

            @Override
            public void await() {
                if (!isComplete()) {
                    s.synchronize();
                }
            }
        };
    }
}
