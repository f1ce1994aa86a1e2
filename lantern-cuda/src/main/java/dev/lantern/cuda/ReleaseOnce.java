package dev.lantern.cuda;

/**
 * The close() of a handle that one driver call (or a few) frees: the first call makes the device
 * current and releases, later calls do nothing, and concurrent calls release once. Shared by
 * {@link CudaEvent}, {@link CudaStream}, {@link CudaGraph}, {@link CudaModule} and
 * {@link CublasLtHandle}, which differ only in what they release.
 */
final class ReleaseOnce {
    private final CudaDevice device;
    private final Runnable release;
    private boolean done;

    ReleaseOnce(CudaDevice device, Runnable release) {
        this.device = device;
        this.release = release;
    }

    synchronized void run() {
        if (done) {
            return;
        }
        done = true;
        device.makeCurrent();
        release.run();
    }
}
