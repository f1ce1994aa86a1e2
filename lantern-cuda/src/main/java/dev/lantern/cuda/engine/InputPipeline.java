package dev.lantern.cuda.engine;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaEvent;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.ir.Node;
import dev.lantern.ir.TensorType;
import dev.lantern.tensor.Tensor;
import dev.lantern.trace.CopyComputeOverlap;
import dev.lantern.trace.CopyComputeOverlap.Interval;
import dev.lantern.trace.Tracing;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Feeds a session batch after batch the way a PyTorch {@code DataLoader} with {@code pin_memory}
 * and {@code non_blocking} copies does, and measures how much of the copying the forwards hide
 * (issue 18's memcpy/compute overlap, from CUDA events instead of nsys).
 *
 * <p>{@link Mode#PIPELINED}: batch {@code i+1} is uploaded from page-locked host memory on a copy
 * stream of its own while batch {@code i} computes on the session's stream. The batches are copied
 * into page-locked memory once, before the timed run, as a {@code DataLoader}'s pin-memory thread
 * hands them over already pinned (a copy from the Java heap into pinned memory runs at a few GB/s
 * on one host thread, slower than the upload itself, and is host work, not what is measured). Two
 * device staging buffers alternate; events order the streams: the compute stream waits for its
 * batch's upload, and the upload into a staging buffer waits until the forward two batches back
 * has taken its batch out of it. A compiled session's launches (and its captured graph) are bound
 * to fixed input addresses, so each forward starts with a device-to-device copy from the staging
 * buffer into the session's inputs on the compute stream, as a PyTorch CUDA-graph user copies into
 * the graph's static input tensors. {@link Mode#SERIAL}: the same work on the session's stream
 * alone, so every upload waits for the forward before it: the baseline, with no overlap by
 * construction.
 *
 * <p>Timing: one start event on the compute stream, then per batch events around the upload (copy
 * stream) and around the forward (compute stream; the device-to-device copy is before it and in
 * neither interval). Event times relative to the start event ({@code cuEventElapsedTime}, about
 * 0.5 µs resolution) make the intervals, and {@link CopyComputeOverlap} their overlap. Tracing is
 * suspended while it runs: a traced forward synchronises, which would serialise the pipeline.
 */
public final class InputPipeline implements AutoCloseable {
    public enum Mode { PIPELINED, SERIAL }

    /**
     * One run: {@code wallMs} from the start event to the last forward's end; the upload and
     * forward intervals in ms from the start event, in batch order; and their overlap.
     */
    public record Result(Mode mode, int batches, long bytesPerBatch, double wallMs, List<Interval> copies, List<Interval> computes,
                         CopyComputeOverlap.Result overlap) {
        public double msPerBatch() {
            return wallMs / batches;
        }
    }

    private record Input(String name, String node, TensorType type, long offset, long bytes) {}

    private final CudaSession session;
    private final Mode mode;
    private final boolean graph;
    private final CudaDevice device;
    private final CudaStream compute;
    private final CudaStream copy;
    private final List<Input> inputs = new ArrayList<>();
    private final long bytes;
    private final CudaStorage[] staging = new CudaStorage[2];

    /**
     * A pipeline feeding {@code session}'s graph inputs; {@code graph}: each forward replays the
     * session's CUDA graph ({@link CudaSession#forwardGraph}), else runs kernel by kernel.
     */
    public InputPipeline(CudaSession session, Mode mode, boolean graph) {
        this.session = session;
        this.mode = mode;
        this.graph = graph;
        this.device = session.device();
        this.compute = session.stream();
        long total = 0;
        for (Node n : session.model().graph().inputs()) {
            TensorType t = n.type().contiguous();
            inputs.add(new Input(n.attrs().getString("name", n.name()), n.name(), t, total, t.bytes()));
            total += (t.bytes() + 255) & ~255L; // each input 256-byte aligned in the shared buffers
        }
        if (inputs.isEmpty()) {
            throw new IllegalArgumentException("the session's graph has no inputs to feed");
        }
        this.bytes = total;
        CudaStream own = null;
        try {
            own = mode == Mode.PIPELINED ? device.newStream(false) : null;
            for (int i = 0; i < 2; i++) {
                staging[i] = device.allocate(total);
            }
        } catch (RuntimeException e) {
            release(own);
            throw e;
        }
        this.copy = own == null ? compute : own;
    }

    /** Bytes uploaded per batch (every input of the graph). */
    public long bytesPerBatch() {
        return bytes;
    }

    /**
     * Runs {@code count} forwards on batches {@code batches.get(i % batches.size())} (each a map by
     * input name with every input), and times them. Returns once the last forward has finished; the
     * session's output is then the last batch's.
     */
    public Result run(List<Map<String, Tensor>> batches, int count) {
        if (batches.isEmpty() || count < 1) {
            throw new IllegalArgumentException("a pipeline run needs at least one batch and one forward, given "
                    + batches.size() + " batches and " + count + " forwards");
        }
        for (Map<String, Tensor> b : batches) {
            check(b);
        }
        List<CudaEvent> events = new ArrayList<>();
        List<CudaStorage> pinned = new ArrayList<>(batches.size());
        try (Tracing.Installed untraced = Tracing.suspend()) {
            for (Map<String, Tensor> b : batches) {
                CudaStorage host = device.allocatePinned(bytes);
                pinned.add(host);
                fill(host, b);
            }
            if (graph) {
                session.forwardGraph(); // captures the graph here, outside the timed run
            }
            compute.synchronize();
            CudaEvent start = event(events);
            CudaEvent[] copyStart = new CudaEvent[count];
            CudaEvent[] copyEnd = new CudaEvent[count];
            CudaEvent[] computeStart = new CudaEvent[count];
            CudaEvent[] computeEnd = new CudaEvent[count];
            for (int i = 0; i < count; i++) {
                copyStart[i] = event(events);
                copyEnd[i] = event(events);
                computeStart[i] = event(events);
                computeEnd[i] = event(events);
            }
            compute.record(start);
            if (copy != compute) {
                copy.waitFor(start); // no upload is timed before the origin
            }
            for (int i = 0; i < count; i++) {
                int slot = i & 1;
                if (i >= 2 && copy != compute) {
                    copy.waitFor(computeStart[i - 2]); // the forward two back has copied its batch out of this staging buffer
                }
                copy.record(copyStart[i]);
                copy.copy(pinned.get(i % pinned.size()), 0, staging[slot], 0, bytes);
                copy.record(copyEnd[i]);
                if (copy != compute) {
                    compute.waitFor(copyEnd[i]);
                }
                for (Input in : inputs) {
                    compute.copy(staging[slot], in.offset(), view(session.addressOf(in.node()), in.bytes()), 0, in.bytes());
                }
                compute.record(computeStart[i]);
                if (graph) {
                    session.forwardGraph();
                } else {
                    session.forward();
                }
                compute.record(computeEnd[i]);
            }
            computeEnd[count - 1].synchronize();
            List<Interval> copies = new ArrayList<>(count);
            List<Interval> computes = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                copies.add(interval(start, copyStart[i], copyEnd[i]));
                computes.add(interval(start, computeStart[i], computeEnd[i]));
            }
            double wall = computeEnd[count - 1].elapsedMillisSince(start);
            return new Result(mode, count, bytes, wall, copies, computes, CopyComputeOverlap.of(computes, copies));
        } finally {
            try {
                compute.synchronize(); // also after a failure: nothing may still read the pinned batches
                copy.synchronize();
            } catch (RuntimeException e) {
                // a lost context runs nothing any more; the run's own failure is the one to report
            }
            events.forEach(CudaEvent::close);
            pinned.forEach(CudaStorage::close);
        }
    }

    private CudaEvent event(List<CudaEvent> events) {
        CudaEvent e = device.newEvent(true);
        events.add(e);
        return e;
    }

    /** The interval between two events in ms from {@code origin}; an end read a hair before its start (rounding) is clamped. */
    private static Interval interval(CudaEvent origin, CudaEvent from, CudaEvent to) {
        double s = from.elapsedMillisSince(origin);
        double e = to.elapsedMillisSince(origin);
        return new Interval(s, Math.max(s, e));
    }

    private void check(Map<String, Tensor> batch) {
        for (Input in : inputs) {
            Tensor t = batch.get(in.name());
            if (t == null) {
                throw new IllegalArgumentException("no value for input '" + in.name() + "' in a batch of " + batch.keySet());
            }
            if (t.dtype() != in.type().dtype() || !t.shape().equals(in.type().shape())) {
                throw new IllegalArgumentException("input '" + in.name() + "': tensor " + t.dtype() + t.shape() + " does not match " + in.type());
            }
        }
        if (batch.size() != inputs.size()) {
            throw new IllegalArgumentException("a batch of " + batch.keySet() + " names an input the graph does not have");
        }
    }

    private void fill(CudaStorage host, Map<String, Tensor> batch) {
        for (Input in : inputs) {
            MemorySegment.copy(batch.get(in.name()).segment(), 0, host.hostSegment(), in.offset(), in.bytes());
        }
    }

    private CudaStorage view(long address, long size) {
        return CudaStorage.view(device, address, size, () -> { });
    }

    private void release(CudaStream own) {
        for (CudaStorage s : staging) {
            if (s != null) {
                s.close();
            }
        }
        if (own != null) {
            own.close();
        }
    }

    /** Frees the staging buffers and the copy stream (a run leaves both streams idle). */
    @Override
    public void close() {
        release(copy == compute ? null : copy);
    }
}
