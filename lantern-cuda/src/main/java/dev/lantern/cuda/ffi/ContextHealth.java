package dev.lantern.cuda.ffi;

import java.util.function.IntFunction;

/**
 * One generation of a CUDA context (a primary context between two resets) and whether it can
 * still take work. States:
 * <pre>
 *   LIVE --(a call fails with a sticky code)--> LOST --(retire: reset or closed)--> RETIRED
 *   LIVE --(retire)--> RETIRED
 * </pre>
 * LOST records the first failing call and the step being issued then, once; from then on
 * {@link #ensureUsable()} throws a copy of that report before any driver call, and any failure
 * seen on the context is reported as the loss ({@link #classify}). RETIRED refuses the objects
 * made in this generation after their context was reset or closed: their handles and pointers
 * name nothing any more, or something new.
 *
 * <p>{@link CudaDriver} does not know which context a call was for; the context current on the
 * calling thread is the one the call used, so {@code CudaDevice} records here, per thread, the
 * generation it made current ({@link #current()}, {@link #setCurrent}), and the driver's
 * {@link CudaDriver#failure} classifies failures against it.
 *
 * <p>The step label costs two or three plain field writes per step: nothing is formatted until a
 * loss is recorded. It is written by the thread that issues work and read on failure, normally by
 * the same thread.
 */
public final class ContextHealth {
    private static final ThreadLocal<ContextHealth[]> CURRENT = ThreadLocal.withInitial(() -> new ContextHealth[1]);

    private final String device;
    private final long context;
    private final int generation;
    private volatile CudaContextLostException refusal; // null while LIVE: the one field the hot path reads
    private volatile CudaContextLostException lost;    // the first sticky failure, kept through retirement
    private Object stepLabel;
    private IntFunction<String> stepNames;
    private int stepIndex;

    /** Generation {@code generation} (1, 2, ...) of {@code device}'s context {@code context} (a CUcontext). */
    public ContextHealth(String device, long context, int generation) {
        this.device = device;
        this.context = context;
        this.generation = generation;
    }

    /** The generation this thread last made current through a Lantern device, or null. */
    public static ContextHealth current() {
        return CURRENT.get()[0];
    }

    public static void setCurrent(ContextHealth health) {
        CURRENT.get()[0] = health;
    }

    /**
     * What to throw for {@code failure}, a failed driver call made on the calling thread: the
     * current generation's classification, or, with no generation current, a loss report without
     * a device when the code is sticky.
     */
    public static CudaException classifyOnCurrentThread(CudaException failure) {
        ContextHealth h = current();
        if (h != null) {
            return h.classify(failure);
        }
        return CuResult.isContextLost(failure.code()) ? CudaContextLostException.lost(null, failure, null) : failure;
    }

    public String device() {
        return device;
    }

    /** The CUcontext handle. */
    public long context() {
        return context;
    }

    public int generation() {
        return generation;
    }

    /** Throws the loss (or retirement) report when this generation can take no more work. */
    public void ensureUsable() {
        CudaContextLostException r = refusal;
        if (r != null) {
            throw r.again();
        }
    }

    /** True when lost or retired. */
    public boolean isUnusable() {
        return refusal != null;
    }

    /** The first loss recorded on this generation, or null (also null when only retired). */
    public CudaContextLostException lost() {
        return lost;
    }

    /** True when retired (reset or closed). */
    public boolean isRetired() {
        CudaContextLostException r = refusal;
        return r != null && r.retired();
    }

    /**
     * What a failed call on this context should throw: once the context is unusable, the loss
     * (whatever the call's own code: it is a consequence); a sticky code while LIVE records the
     * loss, naming this call and the current step, and returns it; any other failure unchanged.
     */
    public CudaException classify(CudaException failure) {
        CudaContextLostException r = refusal;
        if (r != null) {
            return r.again();
        }
        if (!CuResult.isContextLost(failure.code())) {
            return failure;
        }
        synchronized (this) {
            if (refusal != null) {
                return refusal.again();
            }
            CudaContextLostException first = CudaContextLostException.lost(device, failure, stepText());
            lost = first;
            refusal = first;
            return first;
        }
    }

    /** Marks this generation's objects invalid ({@code why}: "reopened", "closed"); idempotent. */
    public synchronized void retire(String why) {
        if (refusal == null || !refusal.retired()) {
            refusal = CudaContextLostException.retired(device, generation, why, lost);
        }
    }

    /** Names the step about to be issued; {@code label.toString()} runs only if a loss is recorded. */
    public void step(Object label) {
        stepNames = null;
        stepLabel = label;
    }

    /** Names the step about to be issued as {@code names.apply(index)}, called only if a loss is recorded. */
    public void step(IntFunction<String> names, int index) {
        stepLabel = null;
        stepIndex = index;
        stepNames = names;
    }

    private String stepText() {
        IntFunction<String> names = stepNames;
        Object label = stepLabel;
        try {
            if (names != null) {
                return names.apply(stepIndex);
            }
            return label == null ? null : label.toString();
        } catch (RuntimeException e) {
            // the report matters more than its label
            return "(step name unavailable: " + e + ")";
        }
    }

    @Override
    public String toString() {
        CudaContextLostException r = refusal;
        return device + " context generation " + generation + (r == null ? " (live)" : r.retired() ? " (retired)" : " (lost)");
    }
}
