package dev.lantern.trace;

import java.util.Map;

/**
 * The process's current trace, if any. The compiler, the executors and the NVRTC compiler report
 * what they do here ({@link #span} around host work, {@link #complete} for times measured
 * elsewhere: a CPU kernel, a CUDA event pair), so that tracing needs no parameter threaded through
 * every API; a command or an embedding program {@link #install}s a {@link TraceRecorder} for as
 * long as it wants a trace. With none installed every call is a volatile read and nothing else:
 * no clock is read and nothing is allocated, so untraced runs cost nothing measurable.
 */
public final class Tracing {
    private static volatile TraceRecorder current;

    private Tracing() {}

    /** Whether a recorder is installed: callers check it before reading clocks or recording events. */
    public static boolean enabled() {
        return current != null;
    }

    /** The installed recorder, or null. */
    public static TraceRecorder current() {
        return current;
    }

    /** A span of host work on this thread, recorded when closed; {@link Span#NONE} when nothing traces. */
    public static Span span(String name, String category) {
        TraceRecorder r = current;
        return r == null ? Span.NONE : new Span(r, name, category, System.nanoTime());
    }

    /** An event timed by the caller on this thread ({@code System.nanoTime} clock), e.g. one CPU kernel. */
    public static void complete(String name, String category, long startNanos, long durNanos, Map<String, Object> args) {
        TraceRecorder r = current;
        if (r != null) {
            r.complete(Thread.currentThread(), name, category, startNanos, durNanos, args);
        }
    }

    /**
     * Installs {@code recorder} as the current trace until the returned handle is closed, which
     * restores the one before (nested installs, as tests make them, unwind in order).
     */
    public static Installed install(TraceRecorder recorder) {
        TraceRecorder before = current;
        current = recorder;
        return new Installed(before, recorder);
    }

    /**
     * Stops recording until the returned handle is closed (a benchmark's timing loop, whose
     * figures must not include tracing's synchronisations); closing it resumes the trace before.
     */
    public static Installed suspend() {
        TraceRecorder before = current;
        current = null;
        return new Installed(before, null);
    }

    /** An {@link #install}ed recorder (null for {@link #suspend}); closing it puts the previous one back. */
    public static final class Installed implements AutoCloseable {
        private final TraceRecorder before;
        private final TraceRecorder recorder;
        private boolean closed;

        private Installed(TraceRecorder before, TraceRecorder recorder) {
            this.before = before;
            this.recorder = recorder;
        }

        public TraceRecorder recorder() {
            return recorder;
        }

        @Override
        public void close() {
            if (!closed) {
                closed = true;
                current = before;
            }
        }
    }
}
