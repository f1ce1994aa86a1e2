package dev.lantern.cuda.driver;

/** A CUDA graph could not be captured or instantiated while the policy was REQUIRE. */
public final class GraphCaptureException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public GraphCaptureException(String message, Throwable cause) {
        super(message, cause);
    }
}
