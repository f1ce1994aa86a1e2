package dev.lantern.cli.cuda;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.engine.CudaSession;
import dev.lantern.engine.Feeds;
import dev.lantern.frontend.Model;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.reference.Accuracy;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.runtime.GraphPolicy;
import dev.lantern.tensor.Tensor;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The figures {@code ./lantern demo --device cuda} reports: one benchmark block in bf16 on GPU 0,
 * compiled (fused kernels, one arena), compiled and replayed as a CUDA graph, and eager (one
 * kernel per op, allocator per op), timed with CUDA events (median of {@code runs}), and the
 * compiled output against the float64 reference on the host.
 *
 * <p>All three are timed as {@link CudaBench#macro} times them, so that the demo's ratio is the
 * bench's: the sessions open at once, each mode after the same {@link CudaBench#WARMUP} untimed
 * forwards. Graph replay runs in a session of its own that only ever replays, so that its
 * graph_hit_pct ({@link dev.lantern.cuda.engine.ForwardStats}: replays ÷ every forward of the session) is a serving
 * session's, not diluted by the plain compiled forwards timed beside it. A cold eager run is not
 * the baseline: its first forwards pay the caching allocator's cuMemAlloc calls and first
 * launches (decoder-small eager read 1.49 ms after 3 warm-ups, 0.186 ms after 10), which
 * overstated the demo's ratio about 8-fold.
 *
 * <p>The block is built in bf16 from {@code config} (parameters drawn from {@code seed} on the
 * host, so the reference sees the very same bf16 values); the reference takes seconds on the
 * host, so it runs only up to {@link #REFERENCE_MAX_FLOPS} (cpu-small: 0.4 GFLOP, ~2 s; decoder-small,
 * 3.2 GFLOP, takes ~25 s on two cores); above it rel_err is against the eager GPU run and
 * {@code relErrAgainst} says so.
 */
public final class CudaDemo {
    public static final double REFERENCE_MAX_FLOPS = 1e9;

    private CudaDemo() {
    }

    /**
     * @param relErrAgainst "f64" (host float64 reference) or "eager" (the GPU eager run)
     * @param graphHitPct   replays ÷ every forward of the graph-replay session (warm-ups included), in %
     * @param peakBytes     the compiled session's peak bytes held from the caching allocator
     */
    public record Result(String device, String config, int kernels, int eagerKernels, double compiledMs, double graphMs,
                         double eagerMs, double speedup, double graphSpeedup, double relErr, String relErrAgainst,
                         double graphHitPct, long peakBytes, long eagerPeakBytes) {

        /** JSON fields (no braces), for the demo's --json line. */
        public String jsonFields() {
            return String.format(Locale.ROOT, "\"device\": \"%s\", \"config\": \"%s\", \"kernels\": %d, \"eager_kernels\": %d, "
                            + "\"compiled_ms\": %.4f, \"graph_ms\": %.4f, \"eager_ms\": %.4f, \"speedup\": %.3f, "
                            + "\"graph_speedup\": %.3f, \"rel_err\": %.3e, \"rel_err_against\": \"%s\", \"graph_hit_pct\": %.1f, "
                            + "\"peak_bytes\": %d, \"eager_peak_bytes\": %d",
                    device, config, kernels, eagerKernels, compiledMs, graphMs, eagerMs, speedup, graphSpeedup, relErr,
                    relErrAgainst, graphHitPct, peakBytes, eagerPeakBytes);
        }
    }

    /** Measures {@code config} on GPU 0. Throws {@code CudaUnavailableException} without a GPU. */
    public static Result measure(BlockConfig config, long seed, int runs) {
        try (CudaDevice device = CudaDevice.open(0)) {
            return measure(device, config, seed, runs);
        }
    }

    /** Measures {@code config} on an open device. */
    public static Result measure(CudaDevice device, BlockConfig config, long seed, int runs) {
        Model model = TransformerBlock.build(config, DType.BF16);
        Map<String, Tensor> params = model.parameters(seed);
        Map<String, Tensor> inputs = Feeds.inputs(model.graph(), seed);
        int warm = CudaBench.WARMUP;
        Tensor compiled;
        Tensor eager;
        double cMs;
        double gMs;
        double eMs;
        double hit;
        long peak;
        long ePeak;
        int kernels;
        int eKernels;
        try (CudaSession s = CudaSession.open(device, model.graph(), params, CudaSession.Options.compiled());
             CudaSession gs = CudaSession.open(device, model.graph(), params, CudaSession.Options.compiled().withPolicy(GraphPolicy.PREFER));
             CudaSession e = CudaSession.open(device, model.graph(), params, CudaSession.Options.eager())) {
            s.setInputs(inputs);
            gs.setInputs(inputs);
            e.setInputs(inputs);
            cMs = s.timeMs(s::forward, warm, runs);
            gMs = gs.timeMs(gs::forwardGraph, warm, runs);
            eMs = e.timeMs(e::forward, warm, runs);
            compiled = s.output();
            eager = e.output();
            hit = gs.forwardStats().graphHitPct();
            peak = s.peakBytes();
            ePeak = e.peakBytes();
            kernels = s.model().kernels().size();
            eKernels = e.model().kernels().size();
        }
        double relErr;
        String against;
        if (CudaBench.blockFlops(config) <= REFERENCE_MAX_FLOPS) {
            Map<String, Tensor> all = new LinkedHashMap<>(params);
            all.putAll(inputs);
            double[] ref = ReferenceInterpreter.run(model.graph(), all).get(model.graph().outputs().getFirst()).data();
            relErr = Accuracy.relErr(compiled.toDoubles(), ref);
            against = "f64";
        } else {
            relErr = Accuracy.relErr(compiled.toDoubles(), eager.toDoubles());
            against = "eager";
        }
        return new Result(device.target().name(), config.name(), kernels, eKernels, cMs, gMs, eMs, eMs / cMs, eMs / gMs, relErr, against,
                hit, peak, ePeak);
    }
}
