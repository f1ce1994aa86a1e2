package dev.lantern.runtime;

/** An ordered queue of device work. Work on one stream runs in order; streams run concurrently. */
public interface Stream extends AutoCloseable {
    Device device();

    boolean highPriority();

    /** Makes later work on this stream wait until {@code event} has completed. */
    void waitFor(Event event);

    /** Records {@code event} at the current tail of this stream. */
    void record(Event event);

    /** Copies {@code bytes} between storages (host or device), asynchronously on this stream. */
    void copy(TensorStorage src, long srcOffset, TensorStorage dst, long dstOffset, long bytes);

    void synchronize();

    @Override
    void close();
}
