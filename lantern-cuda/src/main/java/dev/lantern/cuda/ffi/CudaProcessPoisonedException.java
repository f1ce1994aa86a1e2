package dev.lantern.cuda.ffi;

/**
 * {@code CudaDevice.reopen()} reset the primary context, and the driver still answers with the
 * sticky error: it keeps the error for the life of the process. Measured on the H200 (driver
 * 580.159.04, CUDA 13.0) after {@code CUDA_ERROR_ILLEGAL_ADDRESS}: cuDevicePrimaryCtxReset
 * succeeds, and the next cuDevicePrimaryCtxRetain returns 700 again, whether or not the
 * context's references were released first. The way out is a new process.
 */
public final class CudaProcessPoisonedException extends CudaException {
    private static final long serialVersionUID = 1L;

    public CudaProcessPoisonedException(String device, CudaException after) {
        super(device + ": the context was reset, and " + after.call() + " still fails with " + after.errorName()
                        + ": this driver keeps the error for the life of the process; restart the process",
                after.call(), after.code(), after.errorName(), after);
    }
}
