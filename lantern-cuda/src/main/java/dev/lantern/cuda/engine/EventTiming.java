package dev.lantern.cuda.engine;

import dev.lantern.cuda.CudaDevice;
import dev.lantern.cuda.CudaEvent;
import dev.lantern.cuda.CudaStream;

import java.util.Arrays;

/** CUDA-event timing shared by the session ({@link CudaSession#timeMs}) and the benchmarks. */
final class EventTiming {
    private EventTiming() {}

    /**
     * The median milliseconds (the upper one for an even count) of {@code iters} runs of {@code
     * work} on {@code stream}, each between two timing events, after {@code warm} untimed runs.
     */
    static double medianMs(CudaDevice device, CudaStream stream, Runnable work, int warm, int iters) {
        for (int i = 0; i < warm; i++) {
            work.run();
        }
        stream.synchronize();
        double[] t = new double[iters];
        try (CudaEvent a = device.newEvent(true); CudaEvent b = device.newEvent(true)) {
            for (int i = 0; i < iters; i++) {
                stream.record(a);
                work.run();
                stream.record(b);
                b.synchronize();
                t[i] = b.elapsedMillisSince(a);
            }
        }
        Arrays.sort(t);
        return t[iters / 2];
    }
}
