package dev.lantern.cuda.train;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaEvent;
import dev.lantern.cuda.driver.CudaStream;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Each training step's device time, timed as PyTorch's benchmarks time theirs: a timing event
 * recorded on the step's stream before its first work and one after its last, the span read once
 * the second has completed. The host never waits for an event here except in {@link #drain}: a
 * step's optimizer still runs when the host goes on, so its span is read on a later step, once
 * complete. The event pairs are reused; at most a few are in flight.
 */
final class StepSpans implements AutoCloseable {
    /** Spans kept between two {@link #drain}s: a run that never drains holds only the newest. */
    static final int KEPT = 4096;

    private record Span(CudaEvent begin, CudaEvent end) {}

    private final CudaDevice gpu;
    private final CudaStream stream;
    private final ArrayDeque<Span> free = new ArrayDeque<>();
    private final ArrayDeque<Span> pending = new ArrayDeque<>(); // ended, maybe not complete, in step order
    private final ArrayDeque<Double> done = new ArrayDeque<>();   // at most KEPT, the newest
    private final List<Span> all = new ArrayList<>();
    private Span open;

    StepSpans(CudaDevice gpu, CudaStream stream) {
        this.gpu = gpu;
        this.stream = stream;
    }

    /** Records the start of a step on the stream (again, where the last step threw before its end). */
    void begin() {
        if (open != null) {
            stream.record(open.begin());
            return;
        }
        Span s = free.poll();
        if (s == null) {
            s = new Span(gpu.newEvent(true), gpu.newEvent(true));
            all.add(s);
        }
        stream.record(s.begin());
        open = s;
    }

    /** Records the end of the step begun last. */
    void end() {
        if (open == null) {
            throw new IllegalStateException("a step's span was ended without a begin");
        }
        stream.record(open.end());
        pending.add(open);
        open = null;
    }

    /** Reads the spans whose steps have finished on the device, oldest first, without waiting. */
    void collect() {
        while (!pending.isEmpty() && pending.peek().end().isComplete()) {
            Span s = pending.poll();
            if (done.size() == KEPT) {
                done.removeFirst();
            }
            done.add((double) s.end().elapsedMillisSince(s.begin()));
            free.add(s);
        }
    }

    /** Waits for the stream, then hands over the spans since the last call (at most {@link #KEPT}, the newest), in step order. */
    double[] drain() {
        stream.synchronize();
        collect();
        double[] out = done.stream().mapToDouble(Double::doubleValue).toArray();
        done.clear();
        return out;
    }

    @Override
    public void close() {
        for (Span s : all) {
            s.begin().close();
            s.end().close();
        }
        all.clear();
    }
}
