package dev.lantern.cuda.engine;

import dev.lantern.cuda.blas.CublasLtGemm;
import dev.lantern.cuda.blas.CublasLtHandle;
import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.driver.CudaDevice;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * cuBLASLt plans on one device, one per {@link GemmSpec}, each with up to {@code candidates}
 * heuristic algorithms (the options' {@code BackendChoices.gemmCandidates}) for a workspace of
 * {@link #WORKSPACE_BYTES}. Owns the handle and the plans.
 */
final class GemmPlans implements AutoCloseable {
    /** The cuBLASLt workspace every GEMM step gets. */
    static final long WORKSPACE_BYTES = 32L << 20;

    private final CublasLtHandle lt;
    private final int candidates;
    private final Map<GemmSpec, CublasLtGemm> plans = new LinkedHashMap<>();

    GemmPlans(CudaDevice device, int candidates) {
        this.lt = CublasLtHandle.create(device);
        this.candidates = candidates;
    }

    /** The plan of {@code spec}, made on first use. */
    CublasLtGemm plan(GemmSpec spec) {
        return plans.computeIfAbsent(spec, sp -> lt.plan(sp, WORKSPACE_BYTES, candidates));
    }

    /** How many candidates a plan asks for and the autotuner may time. */
    int candidates() {
        return candidates;
    }

    @Override
    public void close() {
        plans.values().forEach(CublasLtGemm::close);
        plans.clear();
        lt.close();
    }
}
