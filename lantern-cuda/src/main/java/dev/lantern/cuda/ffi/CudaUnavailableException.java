package dev.lantern.cuda.ffi;

/**
 * An NVIDIA library (or a symbol in it) could not be found or loaded. The message lists where
 * it was looked for, so that a user can set {@code LANTERN_CUDA_LIBS}.
 */
public final class CudaUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public CudaUnavailableException(String message) {
        super(message);
    }

    public CudaUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
