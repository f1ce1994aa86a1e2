package dev.lantern.cuda;

import dev.lantern.cuda.ffi.CublasLt;

/** One cublasLtHandle_t for a device; plans ({@link CublasLtGemm}) borrow it. */
public final class CublasLtHandle implements AutoCloseable {
    private final CudaDevice device;
    private final CublasLt lt;
    private final long handle;
    private final ReleaseOnce release;

    private CublasLtHandle(CudaDevice device) {
        this.device = device;
        this.lt = device.libraries().cublasLt();
        device.makeCurrent();
        this.handle = lt.create();
        this.release = new ReleaseOnce(device, () -> lt.destroy(handle));
    }

    public static CublasLtHandle create(CudaDevice device) {
        return new CublasLtHandle(device);
    }

    public CudaDevice device() {
        return device;
    }

    CublasLt lt() {
        return lt;
    }

    long handle() {
        return handle;
    }

    /** Plans a GEMM; see {@link CublasLtGemm#plan}. */
    public CublasLtGemm plan(GemmSpec spec, long maxWorkspaceBytes, int requested) {
        return CublasLtGemm.plan(this, spec, maxWorkspaceBytes, requested);
    }

    @Override
    public void close() {
        release.run();
    }
}
