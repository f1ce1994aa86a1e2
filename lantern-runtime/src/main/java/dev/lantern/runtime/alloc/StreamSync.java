package dev.lantern.runtime.alloc;

/**
 * The allocator's only contact with streams. When a block that other streams used is freed,
 * the allocator asks for a marker at the current tail of each of those streams and keeps the
 * block out of circulation until every marker has completed: only then can no queued kernel
 * still read or write it. On a device this is an event record/query; on the CPU, where work is
 * synchronous, every marker is already complete; in the simulator, tests decide.
 *
 * <p>Stream ids are the caller's: any stable long per stream (0 for the default stream).
 */
public interface StreamSync {
    /** Records a marker at the current tail of stream {@code streamId}. */
    Marker record(long streamId);

    /**
     * Makes later work on stream {@code streamId} wait for {@code marker} without blocking the
     * host ({@code cuStreamWaitEvent}), so that the allocator can hand that stream a block other
     * streams still use, as cudaMallocAsync does with internal dependencies. Returns false when
     * unsupported; the allocator then only reuses blocks whose markers have completed.
     */
    default boolean streamWait(long streamId, Marker marker) {
        return false;
    }

    /** One recorded point of one stream. */
    interface Marker {
        /** Whether all work queued before the marker has finished; never blocks. */
        boolean isComplete();

        /** Blocks until complete (used before giving cached memory back under OOM and in emptyCache). */
        void await();

        /** Frees the underlying event, if any. */
        default void close() {
        }
    }

    /** For synchronous devices: every marker is complete when recorded. */
    StreamSync SYNCHRONOUS = new StreamSync() {
        @Override
        public Marker record(long streamId) {
            return new Marker() {
                @Override
                public boolean isComplete() {
                    return true;
                }

                @Override
                public void await() {
                }
            };
        }

        @Override
        public boolean streamWait(long streamId, Marker marker) {
            return true;
        }
    };
}
