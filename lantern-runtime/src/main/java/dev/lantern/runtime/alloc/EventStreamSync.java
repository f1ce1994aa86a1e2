package dev.lantern.runtime.alloc;

import dev.lantern.runtime.Event;
import dev.lantern.runtime.Stream;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@link StreamSync} over runtime streams: a marker is an {@link Event} recorded on the stream.
 * Any device (CPU or CUDA) gets event-safe cross-stream reuse this way; callers register each
 * stream under the id they pass to the allocator.
 */
public final class EventStreamSync implements StreamSync {
    private final TreeMap<Long, Stream> streams = new TreeMap<>();

    public synchronized EventStreamSync register(long id, Stream stream) {
        streams.put(id, stream);
        return this;
    }

    public synchronized Map<Long, Stream> streams() {
        return Map.copyOf(streams);
    }

    @Override
    public Marker record(long streamId) {
        Stream s;
        synchronized (this) {
            s = streams.get(streamId);
        }
        if (s == null) {
            throw new IllegalArgumentException("stream id " + streamId + " is not registered; known: " + streams.keySet());
        }
        Event e = s.device().newEvent(false);
        s.record(e);
        return new EventMarker(e);
    }

    @Override
    public boolean streamWait(long streamId, Marker marker) {
        Stream s;
        synchronized (this) {
            s = streams.get(streamId);
        }
        if (s == null || !(marker instanceof EventMarker m)) {
            return false;
        }
        s.waitFor(m.event());
        return true;
    }

    private record EventMarker(Event e) implements Marker {
        Event event() {
            return e;
        }

        @Override
        public boolean isComplete() {
            return e.isComplete();
        }

        @Override
        public void await() {
            e.synchronize();
        }

        @Override
        public void close() {
            e.close();
        }
    }
}
