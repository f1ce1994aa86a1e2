package dev.lantern.cuda.ffi;

/**
 * A failed call into an NVIDIA library: names the call and the library's own error name,
 * e.g. {@code cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)}.
 */
public class CudaException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String call;
    private final int code;
    private final String errorName;

    public CudaException(String call, int code, String errorName, String detail) {
        super(format(call, errorName, detail));
        this.call = call;
        this.code = code;
        this.errorName = errorName;
    }

    /** For subclasses whose message is not the standard one; {@code cause} may be null. */
    protected CudaException(String message, String call, int code, String errorName, Throwable cause) {
        super(message, cause);
        this.call = call;
        this.code = code;
        this.errorName = errorName;
    }

    /** Builds the standard message; {@code detail} (CUDA's description, a log) may be null or blank. */
    public static String format(String call, String errorName, String detail) {
        String msg = call + " failed: " + errorName;
        return detail == null || detail.isBlank() ? msg : msg + " (" + detail.strip() + ")";
    }

    /** The native function that failed, e.g. "cuMemAlloc_v2". */
    public String call() {
        return call;
    }

    /** The raw status code (CUresult, nvrtcResult or cublasStatus_t). */
    public int code() {
        return code;
    }

    /** The library's name for the code, e.g. "CUDA_ERROR_OUT_OF_MEMORY". */
    public String errorName() {
        return errorName;
    }
}
