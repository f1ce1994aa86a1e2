package dev.lantern.runtime;

/** A marker in a stream: other streams can wait on it, and two timing events give elapsed time. */
public interface Event extends AutoCloseable {
    boolean isComplete();

    void synchronize();

    /** Milliseconds between {@code start} and this event; both must be timing events and complete. */
    float elapsedMillisSince(Event start);

    @Override
    void close();
}
