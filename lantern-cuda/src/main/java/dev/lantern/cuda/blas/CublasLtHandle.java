package dev.lantern.cuda.blas;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.ReleaseOnce;
import dev.lantern.cuda.ffi.ContextHealth;
import dev.lantern.cuda.ffi.CublasLt;

/** One cublasLtHandle_t for a device; plans ({@link CublasLtGemm}) borrow it. */
public final class CublasLtHandle implements AutoCloseable {
    private final CudaDevice device;
    private final CublasLt lt;
    private final ContextHealth generation;
    private final long handle;
    private final ReleaseOnce release;

    private CublasLtHandle(CudaDevice device) {
        this.device = device;
        this.lt = device.libraries().cublasLt();
        this.generation = device.generation();
        device.makeCurrent(generation);
        this.handle = lt.create();
        this.release = new ReleaseOnce(device, generation, () -> lt.destroy(handle));
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

    ContextHealth generation() {
        return generation;
    }

    /** Plans a GEMM; see {@link CublasLtGemm#plan}. */
    public CublasLtGemm plan(GemmSpec spec, long maxWorkspaceBytes, int requested) {
        return CublasLtGemm.plan(this, spec, maxWorkspaceBytes, requested);
    }

    /** Plans a GEMM, in strict determinism mode when {@code deterministic}; see {@link CublasLtGemm#plan(CublasLtHandle, GemmSpec, long, int, boolean)}. */
    public CublasLtGemm plan(GemmSpec spec, long maxWorkspaceBytes, int requested, boolean deterministic) {
        return CublasLtGemm.plan(this, spec, maxWorkspaceBytes, requested, deterministic);
    }

    @Override
    public void close() {
        release.run();
    }
}
