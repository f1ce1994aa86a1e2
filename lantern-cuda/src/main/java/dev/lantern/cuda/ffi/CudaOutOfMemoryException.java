package dev.lantern.cuda.ffi;

/** CUDA_ERROR_OUT_OF_MEMORY from an allocation; carries the size that was asked for. */
public final class CudaOutOfMemoryException extends CudaException {
    private static final long serialVersionUID = 1L;

    private final long requestedBytes;

    public CudaOutOfMemoryException(String call, long requestedBytes, String detail) {
        super(call, CuResult.CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY",
                "requested " + requestedBytes + " bytes" + (detail == null ? "" : "; " + detail));
        this.requestedBytes = requestedBytes;
    }

    public long requestedBytes() {
        return requestedBytes;
    }
}
