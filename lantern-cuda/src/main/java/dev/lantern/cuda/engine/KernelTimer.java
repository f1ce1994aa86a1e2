package dev.lantern.cuda.engine;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaStream;

/** How the {@link Autotuner} times work: CUDA events on a stream ({@link EventTiming}). */
public interface KernelTimer {
    /** Median ms of {@code iters} runs after {@code warm}. */
    double medianMs(Runnable work, int warm, int iters);

    /** Median ms of {@code iters} runs after {@code warmMs} of back-to-back runs (the power-limited state). */
    double sustainedMs(Runnable work, double warmMs, int iters);

    /** Event timing of work enqueued on {@code stream}. */
    static KernelTimer events(CudaDevice device, CudaStream stream) {
        return new KernelTimer() {
            @Override
            public double medianMs(Runnable work, int warm, int iters) {
                return EventTiming.medianMs(device, stream, work, warm, iters);
            }

            @Override
            public double sustainedMs(Runnable work, double warmMs, int iters) {
                return EventTiming.sustainedMedianMs(device, stream, work, warmMs, iters);
            }
        };
    }
}
