package dev.lantern.trace;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Collects one run's trace events in memory, then writes them as Chrome/Perfetto trace JSON
 * ({@link TraceJson}). Host work sits on the track of the thread that did it (its id and name);
 * work timed elsewhere (a CUDA stream) on a named track of its own ({@link #track}). Times are
 * {@code System.nanoTime} values; the file counts them from this recorder's creation.
 *
 * <p>At most {@code maxEvents} events are kept (a long training run with a per-kernel event each
 * step would otherwise grow without bound): later ones are counted in {@link #dropped} and the file
 * says how many were dropped.
 */
public final class TraceRecorder {
    /** The default cap: about 100 MB of JSON. */
    public static final int DEFAULT_MAX_EVENTS = 1_000_000;
    /** Named tracks' ids start here, far above any thread id a JVM hands out in practice. */
    static final long TRACK_BASE = 1L << 40;

    private final long origin = System.nanoTime();
    private final int maxEvents;
    private final List<TraceEvent> events = new ArrayList<>();
    private final Map<Long, String> trackNames = new LinkedHashMap<>();
    private final Map<String, Long> namedTracks = new LinkedHashMap<>();
    private final AtomicLong dropped = new AtomicLong();

    public TraceRecorder() {
        this(DEFAULT_MAX_EVENTS);
    }

    public TraceRecorder(int maxEvents) {
        if (maxEvents < 1) {
            throw new IllegalArgumentException("maxEvents must be at least 1, found " + maxEvents);
        }
        this.maxEvents = maxEvents;
    }

    /** The {@code System.nanoTime} value that is time 0 in the file. */
    public long origin() {
        return origin;
    }

    /** The id of a named track (a CUDA stream, say), made on first use; events on it nest among themselves only. */
    public synchronized long track(String name) {
        return namedTracks.computeIfAbsent(name, n -> {
            long id = TRACK_BASE + namedTracks.size();
            trackNames.put(id, n);
            return id;
        });
    }

    /** Records an event on {@code thread}'s track. */
    void complete(Thread thread, String name, String category, long startNanos, long durNanos, Map<String, Object> args) {
        long tid = thread.threadId();
        synchronized (this) {
            trackNames.putIfAbsent(tid, thread.getName().isEmpty() ? "thread " + tid : thread.getName());
        }
        add(new TraceEvent(name, category, tid, startNanos - origin, durNanos, args));
    }

    /** Records an event on a named {@link #track}, timed by the caller ({@code System.nanoTime} clock). */
    public void complete(long track, String name, String category, long startNanos, long durNanos, Map<String, Object> args) {
        add(new TraceEvent(name, category, track, startNanos - origin, durNanos, args));
    }

    private synchronized void add(TraceEvent e) {
        if (events.size() >= maxEvents) {
            dropped.incrementAndGet();
            return;
        }
        events.add(e);
    }

    /** The events recorded so far, in the order they ended. */
    public synchronized List<TraceEvent> events() {
        return List.copyOf(events);
    }

    /** Every track's id and name (threads by their names, named tracks by theirs). */
    public synchronized Map<Long, String> trackNames() {
        return new LinkedHashMap<>(trackNames);
    }

    /** Events not kept because {@code maxEvents} were already recorded. */
    public long dropped() {
        return dropped.get();
    }

    /** Writes the trace to {@code file} atomically (a temporary file beside it, then a move): a reader never sees half a trace. */
    public void write(Path file) {
        TraceJson.write(this, file);
    }
}
