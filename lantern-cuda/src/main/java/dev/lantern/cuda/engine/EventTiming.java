package dev.lantern.cuda.engine;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaEvent;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.trace.TraceRecorder;
import dev.lantern.trace.Tracing;

import java.util.Arrays;

/** CUDA-event timing shared by the session ({@link CudaSession#timeMs}) and the benchmarks. */
public final class EventTiming {
    private EventTiming() {}

    /**
     * The median milliseconds (the upper one for an even count) of {@code iters} runs of {@code
     * work} on {@code stream}, each between two timing events, after {@code warm} untimed runs.
     */
    public static double medianMs(CudaDevice device, CudaStream stream, Runnable work, int warm, int iters) {
        return medianMs(device, stream, work, warm, iters, "timed run");
    }

    /**
     * As {@link #medianMs(CudaDevice, CudaStream, Runnable, int, int)}; while a trace is recorded,
     * every timed run is also a slice named {@code label} on the stream's track. Each run is
     * synchronised anyway, so its end is placed at the host time the synchronisation returned, and
     * tracing adds host work only between the timing events, never inside them.
     */
    public static double medianMs(CudaDevice device, CudaStream stream, Runnable work, int warm, int iters, String label) {
        for (int i = 0; i < warm; i++) {
            work.run();
        }
        stream.synchronize();
        double[] t = new double[iters];
        TraceRecorder rec = Tracing.current();
        long track = rec == null ? 0 : rec.track("cuda stream " + Long.toHexString(stream.handle()));
        try (CudaEvent a = device.newEvent(true); CudaEvent b = device.newEvent(true)) {
            for (int i = 0; i < iters; i++) {
                stream.record(a);
                work.run();
                stream.record(b);
                b.synchronize();
                t[i] = b.elapsedMillisSince(a);
                if (rec != null) {
                    long dur = Math.round(t[i] * 1e6);
                    rec.complete(track, label, "kernel", System.nanoTime() - dur, dur, java.util.Map.of("iteration", i));
                }
            }
        }
        return median(t);
    }

    /**
     * The median milliseconds of {@code iters} back-to-back runs of {@code work}, after enough
     * untimed runs to keep the GPU busy for {@code warmMs}: the steady state of sustained load.
     * An H200 running big GEMMs reaches its power limit (700 W) within ~100 ms and lowers its
     * clock from 1980 to ~1450 MHz; a short burst after idle times the work at the higher clock.
     * Events between runs are recorded without host synchronisation, so the GPU never idles.
     */
    public static double sustainedMedianMs(CudaDevice device, CudaStream stream, Runnable work, double warmMs, int iters) {
        double one = medianMs(device, stream, work, 1, 1);
        long warm = Math.max(1, Math.round(warmMs / Math.max(one, 1e-3)));
        for (long i = 0; i < warm; i++) {
            work.run();
        }
        double[] t = new double[iters];
        CudaEvent[] e = new CudaEvent[iters + 1];
        try {
            for (int i = 0; i <= iters; i++) {
                e[i] = device.newEvent(true);
            }
            stream.record(e[0]);
            for (int i = 0; i < iters; i++) {
                work.run();
                stream.record(e[i + 1]);
            }
            e[iters].synchronize();
            for (int i = 0; i < iters; i++) {
                t[i] = e[i + 1].elapsedMillisSince(e[i]);
            }
        } finally {
            for (CudaEvent x : e) {
                if (x != null) {
                    x.close();
                }
            }
        }
        return median(t);
    }

    /** The median of {@code v} (the upper one for an even count); {@code v} is left as it was. */
    public static double median(double[] v) {
        double[] c = v.clone();
        Arrays.sort(c);
        return c[c.length / 2];
    }
}
