package dev.lantern.cuda.engine;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaEvent;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.ffi.Nvtx;
import dev.lantern.cuda.lower.Step;
import dev.lantern.trace.TraceRecorder;
import dev.lantern.trace.Tracing;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * A compiled forward while a trace is recorded ({@link Tracing}): a timing event before every step
 * and after the last (as {@link StepProfiler#inForward} times them), each step an NVTX range named
 * after it when NVTX is loaded, then a synchronisation and one trace event per step on the
 * {@code cuda stream} track, named as bench's {@code steps} name them.
 *
 * <p>CUDA events give times relative to each other only. The forward's last event is placed at
 * the host time its synchronisation returned, and the steps before it by their event times: the
 * GPU track then lines up with the host's within the synchronisation's wake-up latency (a few
 * µs). A traced forward synchronises, so a traced run's forwards do not overlap the host's next
 * work as untraced ones do: benchmarks take their timings untraced (CudaBench suspends tracing).
 */
final class TracedForward {
    private TracedForward() {}

    /** Runs {@code bound} (the session's steps, stream order) once, traced. */
    static void run(CudaDevice device, CudaStream stream, List<Step> steps, List<Runnable> bound, IntFunction<String> stepNames) {
        TraceRecorder rec = Tracing.current();
        Nvtx nvtx = device.libraries().nvtx();
        int n = bound.size();
        List<CudaEvent> events = new ArrayList<>(n + 1);
        try {
            for (int i = 0; i <= n; i++) {
                events.add(device.newEvent(true));
            }
            long hostStart = System.nanoTime();
            for (int i = 0; i < n; i++) {
                device.step(stepNames, i);
                stream.record(events.get(i));
                nvtx.push(StepProfiler.describe(steps.get(i)));
                try {
                    bound.get(i).run();
                } finally {
                    nvtx.pop();
                }
            }
            stream.record(events.get(n));
            long launched = System.nanoTime();
            events.get(n).synchronize();
            long hostEnd = System.nanoTime();
            if (rec == null) {
                return; // the trace was removed while this forward ran
            }
            Tracing.complete("launch forward", "host", hostStart, launched - hostStart, Map.of("steps", n));
            long gpuStart = hostEnd - nanos(events.get(n).elapsedMillisSince(events.getFirst()));
            long track = rec.track("cuda stream " + Long.toHexString(stream.handle()));
            for (int i = 0; i < n; i++) {
                long start = gpuStart + nanos(events.get(i).elapsedMillisSince(events.getFirst()));
                long dur = nanos(events.get(i + 1).elapsedMillisSince(events.get(i)));
                Step s = steps.get(i);
                rec.complete(track, StepProfiler.describe(s), s instanceof Step.Gemm ? "gemm" : "kernel", start, dur,
                        Map.of("step", i, "kernel", s.kernel()));
            }
        } finally {
            events.forEach(CudaEvent::close);
        }
    }

    /** A CUDA-event time in ms as whole nanoseconds (events resolve about 0.5 µs). */
    private static long nanos(float ms) {
        return Math.max(0, Math.round(ms * 1e6));
    }

    /** The graph replay (or capture) of one forward as one GPU slice: a graph's kernels cannot be timed apart. */
    static void graph(CudaDevice device, CudaStream stream, Runnable replay) {
        TraceRecorder rec = Tracing.current();
        try (CudaEvent start = device.newEvent(true); CudaEvent end = device.newEvent(true)) {
            long hostStart = System.nanoTime();
            stream.record(start);
            replay.run();
            stream.record(end);
            long launched = System.nanoTime();
            end.synchronize();
            long hostEnd = System.nanoTime();
            if (rec != null) {
                Tracing.complete("launch graph forward", "host", hostStart, launched - hostStart, null);
                long dur = nanos(end.elapsedMillisSince(start));
                rec.complete(rec.track("cuda stream " + Long.toHexString(stream.handle())), "graph forward", "graph",
                        hostEnd - dur, dur, null);
            }
        }
    }
}
