package dev.lantern.runtime.alloc;

import java.util.TreeMap;

/**
 * Stream markers for the simulator, on a logical clock: a marker recorded at time t completes
 * at t + latency (never before an earlier marker of the same stream), as an event behind a
 * busy stream completes some time after the host recorded it. The soak ticks the clock once
 * per allocator operation; tests tick it by hand or use {@link #drain()}. Completion is
 * therefore deterministic.
 */
public final class SimulatedStreamSync implements StreamSync {
    private final long latency;
    private final TreeMap<Long, Long> lastTarget = new TreeMap<>(); // stream -> latest completion time
    private long now;
    private long recorded;
    private long streamWaits;

    /** @param latency clock ticks between recording a marker and its completion */
    public SimulatedStreamSync(long latency) {
        if (latency < 0) {
            throw new IllegalArgumentException("latency must be >= 0, got " + latency);
        }
        this.latency = latency;
    }

    public synchronized void tick(long n) {
        now += n;
    }

    /** Completes every marker recorded so far. */
    public synchronized void drain() {
        for (long t : lastTarget.values()) {
            now = Math.max(now, t);
        }
    }

    public synchronized long now() {
        return now;
    }

    /** Stream-side waits the allocator asked for. */
    public synchronized long streamWaits() {
        return streamWaits;
    }

    /** Orders the waiting stream after the marker; on the logical clock that needs no action. */
    @Override
    public synchronized boolean streamWait(long streamId, Marker marker) {
        streamWaits++;
        return true;
    }

    /** Markers recorded so far. */
    public synchronized long recorded() {
        return recorded;
    }

    @Override
    public synchronized Marker record(long streamId) {
        recorded++;
        long target = Math.max(now + latency, lastTarget.getOrDefault(streamId, 0L));
        lastTarget.put(streamId, target);
        return new Marker() {
            private boolean awaited;

            @Override
            public boolean isComplete() {
                synchronized (SimulatedStreamSync.this) {
                    return awaited || now >= target;
                }
            }

            @Override
            public void await() {
                synchronized (SimulatedStreamSync.this) {
                    awaited = true; // a host-side synchronize: this point of the stream has run
                }
            }
        };
    }
}
