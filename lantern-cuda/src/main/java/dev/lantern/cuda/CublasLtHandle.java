package dev.lantern.cuda;

import dev.lantern.cuda.ffi.CublasLt;

/** One cublasLtHandle_t for a device; plans ({@link CublasLtGemm}) borrow it. */
public final class CublasLtHandle implements AutoCloseable {
    private final CudaDevice device;
    private final CublasLt lt;
    private final long handle;
    private boolean closed;

    private CublasLtHandle(CudaDevice device) {
        this.device = device;
        this.lt = device.libraries().cublasLt();
        device.makeCurrent();
        this.handle = lt.create();
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
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        device.makeCurrent();
        lt.destroy(handle);
    }
}
