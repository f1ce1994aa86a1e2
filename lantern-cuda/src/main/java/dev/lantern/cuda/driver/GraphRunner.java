package dev.lantern.cuda.driver;

import dev.lantern.cuda.ffi.CudaContextLostException;
import dev.lantern.cuda.ffi.CudaDriver;
import dev.lantern.cuda.ffi.CudaGraphApi;
import dev.lantern.runtime.GraphPolicy;
import java.lang.System.Logger.Level;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Runs a piece of device work (a Runnable that issues launches on one stream) either as a
 * CUDA graph, captured once per shape-bucket key and replayed after, or eagerly:
 * <ul>
 *   <li>OFF: always eager.</li>
 *   <li>PREFER: capture on first sight of a key; a capture failure (an illegal call during
 *       capture, instantiation refused) is counted and logged with its reason, the work runs
 *       eagerly, and that key stays eager from then on.</li>
 *   <li>REQUIRE: a capture failure throws {@link GraphCaptureException}.</li>
 * </ul>
 * Capture uses CU_STREAM_CAPTURE_MODE_THREAD_LOCAL: unsafe calls (synchronous copies,
 * cuMemAlloc, stream synchronisation) made by the capturing thread invalidate the capture,
 * while other threads stay free to allocate. The work must issue everything on the given
 * stream (or streams joined to it by events) and must be replayable: the same pointers and
 * scalars every time for the same key.
 *
 * <p>{@link Stats#graphHitPct} = replays ÷ (replays + eager runs) of this runner; the launch
 * right after a capture is a replay, since it runs the graph. It sees only the work passed to
 * {@link #run}: a session's graph_hit_pct, over all its forwards, is {@code CudaSession.forwardStats()}.
 */
public final class GraphRunner implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(GraphRunner.class.getName());

    private final CudaDevice device;
    private final CudaDriver driver;
    private final GraphPolicy policy;
    private final Map<String, CudaGraph> graphs = new HashMap<>();
    private final Set<String> eagerOnly = new HashSet<>();
    private long replays;
    private long eagerRuns;
    private long captures;
    private long captureFailures;
    private String lastFailure;

    public GraphRunner(CudaDevice device, GraphPolicy policy) {
        this.device = device;
        this.driver = device.driver();
        this.policy = policy;
    }

    /** Counters since creation, of the work passed to {@link #run} only. */
    public record Stats(long replays, long eagerRuns, long captures, long captureFailures) {
        public double graphHitPct() {
            long total = replays + eagerRuns;
            return total == 0 ? 0.0 : 100.0 * replays / total;
        }
    }

    /** Runs {@code work} for bucket {@code key} on {@code stream}, as a graph when the policy allows. */
    public synchronized void run(String key, CudaStream stream, Runnable work) {
        if (policy == GraphPolicy.OFF || eagerOnly.contains(key)) {
            work.run();
            eagerRuns++;
            return;
        }
        CudaGraph graph = graphs.get(key);
        if (graph == null) {
            graph = capture(key, stream, work);
            if (graph == null) { // PREFER fell back
                work.run();
                eagerRuns++;
                return;
            }
            graphs.put(key, graph);
        }
        device.step(graph); // a fault in the replay is reported against the graph, not the last captured step
        graph.launch(stream);
        replays++;
    }

    /** Captures {@code work}; returns null under PREFER when capture fails, throws under REQUIRE. */
    private CudaGraph capture(String key, CudaStream stream, Runnable work) {
        device.makeCurrent(stream.generation());
        captures++;
        driver.graphs().streamBeginCapture(stream.handle(), CudaGraphApi.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
        RuntimeException failure = null;
        try {
            work.run();
        } catch (RuntimeException e) {
            failure = e;
        }
        // Capture must always be ended, also after a failure, or the stream stays in capture mode.
        long[] end = driver.graphs().streamEndCapture(stream.handle());
        int rc = (int) end[0];
        long rawGraph = end[1];
        if (failure == null && rc != 0) {
            failure = driver.failure(driver.graphs().endCaptureName(), rc);
        }
        if (failure == null) {
            try {
                return CudaGraph.instantiate(device, rawGraph);
            } catch (RuntimeException e) {
                failure = e; // instantiate destroyed rawGraph
                rawGraph = 0;
            }
        } else if (rawGraph != 0) {
            long g = rawGraph;
            device.release(stream.generation(), () -> driver.graphs().graphDestroy(g));
        }
        if (failure instanceof CudaContextLostException lost) {
            throw lost; // the context is gone, not the capture: no eager fallback, no eager-only mark
        }
        captureFailures++;
        lastFailure = failure.getMessage();
        if (policy == GraphPolicy.REQUIRE) {
            throw new GraphCaptureException("graph capture of bucket '" + key + "' failed under REQUIRE: "
                    + failure.getMessage(), failure);
        }
        eagerOnly.add(key);
        LOG.log(Level.WARNING, "graph capture of bucket ''{0}'' failed, running eagerly from now on: {1}",
                key, failure.getMessage());
        return null;
    }

    public GraphPolicy policy() {
        return policy;
    }

    public synchronized Stats stats() {
        return new Stats(replays, eagerRuns, captures, captureFailures);
    }

    /** The reason of the last capture failure, or null. */
    public synchronized String lastFailure() {
        return lastFailure;
    }

    /** The graph captured for {@code key}, or null (not captured yet, or eager-only). */
    public synchronized CudaGraph graph(String key) {
        return graphs.get(key);
    }

    @Override
    public synchronized void close() {
        for (CudaGraph g : graphs.values()) {
            g.close();
        }
        graphs.clear();
    }
}
