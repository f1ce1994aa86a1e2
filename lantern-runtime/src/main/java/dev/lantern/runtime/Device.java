package dev.lantern.runtime;

/**
 * A compute device: the CPU or one CUDA GPU. Owns streams, events, memory and loaded modules.
 * Implementations: {@code CpuDevice} here, {@code CudaDevice} in lantern-cuda.
 */
public interface Device extends AutoCloseable {
    /** "cpu" or "cuda:0". */
    String name();

    /** A human description, e.g. "NVIDIA H200 (sm_90, 139 GiB)". */
    String description();

    /** Total and free device memory in bytes (for the CPU: the JVM's max heap and its free part). */
    long totalMemory();

    long freeMemory();

    /** A new stream; {@code highPriority} asks for the device's greatest priority. */
    Stream newStream(boolean highPriority);

    /** The default stream of this device. */
    Stream defaultStream();

    Event newEvent(boolean timing);

    /** Allocates {@code bytes} of device memory, zero-filled is not promised. */
    TensorStorage allocate(long bytes);

    void synchronize();

    @Override
    void close();
}
