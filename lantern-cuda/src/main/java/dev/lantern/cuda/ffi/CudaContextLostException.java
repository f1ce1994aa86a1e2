package dev.lantern.cuda.ffi;

/**
 * A CUDA context can take no more work: a call on it failed with a "sticky" code
 * ({@link CuResult#isContextLost}), e.g. {@code CUDA_ERROR_ILLEGAL_ADDRESS} from a kernel that
 * wrote out of bounds, or the context was reset since the object in use was created.
 *
 * <p>{@link #call()}, {@link #code()} and {@link #errorName()} are those of the FIRST failing
 * call; {@link #step()} names the step that was being issued then (faults in asynchronous work
 * surface at the next synchronising call, so the faulty kernel is that step or one queued
 * before it). Every later use of the context throws a copy of this exception ({@link #again()})
 * without calling the driver, instead of a cascade of unrelated-looking failures. The way on is
 * {@code CudaDevice.reopen()}.
 */
public final class CudaContextLostException extends CudaException {
    private static final long serialVersionUID = 1L;

    private final String device;
    private final String step;
    private final boolean retired;

    private CudaContextLostException(String message, String call, int code, String errorName, String device,
                                     String step, boolean retired, Throwable cause) {
        super(message, call, code, errorName, cause);
        this.device = device;
        this.step = step;
        this.retired = retired;
    }

    /**
     * The loss as first seen: {@code first} is the failed call's own exception (kept as the
     * cause), {@code device} e.g. "cuda:0" (null when unknown), {@code step} the step being
     * issued (null when none was named).
     */
    public static CudaContextLostException lost(String device, CudaException first, String step) {
        String prefix = first.call() + " failed: ";
        String what = first.getMessage().startsWith(prefix)
                ? first.getMessage().substring(prefix.length()) : first.getMessage();
        String message = (device == null ? "CUDA" : device) + ": context lost at " + first.call() + ": " + what
                + " during " + (step == null ? "an unnamed step" : "step " + step + " (the last step issued)")
                + "; reopen the device (CudaDevice.reopen()), or restart the process where the driver keeps the error";
        return new CudaContextLostException(message, first.call(), first.code(), first.errorName(), device, step,
                false, first);
    }

    /**
     * The refusal for objects of a context generation that was reset or closed: {@code why}
     * e.g. "reopened"; {@code loss} the loss that came before, or null.
     */
    public static CudaContextLostException retired(String device, int generation, String why,
                                                   CudaContextLostException loss) {
        String message = device + ": context generation " + generation + " was " + why
                + (loss == null ? "" : " after it was lost (" + loss.getMessage() + ")")
                + "; objects created in it are invalid: create them again on the device";
        return new CudaContextLostException(message, loss == null ? "(" + why + ")" : loss.call(),
                loss == null ? 0 : loss.code(), loss == null ? "CONTEXT_" + why.toUpperCase(java.util.Locale.ROOT)
                        : loss.errorName(), device, loss == null ? null : loss.step, true, loss);
    }

    /**
     * The same report, thrown again by a later call: same message and fields, this one as the
     * cause (a new instance, so each refusal has its own stack and none suppresses itself).
     */
    public CudaContextLostException again() {
        return new CudaContextLostException(getMessage(), call(), code(), errorName(), device, step, retired, this);
    }

    /** "cuda:0", or null when the failing call was made with no Lantern device current. */
    public String device() {
        return device;
    }

    /** The step being issued when the loss was seen, or null when none was named. */
    public String step() {
        return step;
    }

    /** True when the context was reset or closed (the object is stale), not lost in use. */
    public boolean retired() {
        return retired;
    }
}
