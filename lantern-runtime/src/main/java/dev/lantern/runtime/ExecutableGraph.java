package dev.lantern.runtime;

/**
 * A captured sequence of device work that can be replayed as one launch (a CUDA graph).
 * Named ExecutableGraph so that it does not clash with the IR's Graph.
 */
public interface ExecutableGraph extends AutoCloseable {
    /** Replays the captured work on {@code stream}. */
    void launch(Stream stream);

    /** Number of kernel nodes captured. */
    int kernelCount();

    @Override
    void close();
}
