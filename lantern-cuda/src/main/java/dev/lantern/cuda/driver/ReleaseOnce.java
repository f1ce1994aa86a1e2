package dev.lantern.cuda.driver;

import dev.lantern.cuda.ffi.ContextHealth;

/**
 * The close() of a handle that one driver call (or a few) frees: the first call makes the device
 * current and releases, later calls do nothing, and concurrent calls release once. When the
 * handle's context generation is lost, reset or closed, nothing is released and nothing thrown
 * ({@link CudaDevice#release}). Shared by {@link CudaEvent}, {@link CudaStream},
 * {@link CudaGraph}, {@link CudaModule} and {@code CublasLtHandle}, which differ only in what
 * they release.
 */
public final class ReleaseOnce {
    private final CudaDevice device;
    private final ContextHealth generation;
    private final Runnable release;
    private boolean done;

    public ReleaseOnce(CudaDevice device, ContextHealth generation, Runnable release) {
        this.device = device;
        this.generation = generation;
        this.release = release;
    }

    public synchronized void run() {
        if (done) {
            return;
        }
        done = true;
        device.release(generation, release);
    }
}
