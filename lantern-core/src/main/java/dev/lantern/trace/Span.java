package dev.lantern.trace;

/**
 * A timed range of host work: opened by {@link Tracing#span}, recorded as one complete event
 * when closed (use try-with-resources, so nested spans close inside their parents and the trace
 * nests as the code does). {@link #NONE}, returned while nothing traces, records nothing.
 */
public final class Span implements AutoCloseable {
    /** The span of an untraced run: closing it does nothing, and it reads no clock. */
    public static final Span NONE = new Span(null, null, null, 0);

    private final TraceRecorder recorder;
    private final String name;
    private final String category;
    private final long start;

    Span(TraceRecorder recorder, String name, String category, long start) {
        this.recorder = recorder;
        this.name = name;
        this.category = category;
        this.start = start;
    }

    @Override
    public void close() {
        if (recorder != null) {
            recorder.complete(Thread.currentThread(), name, category, start, System.nanoTime() - start, null);
        }
    }
}
