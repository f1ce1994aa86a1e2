package dev.lantern.cuda.engine;

import dev.lantern.cuda.blas.CublasLtGemm;
import dev.lantern.cuda.blas.CublasLtHandle;
import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.engine.NondeterministicKernelException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * cuBLASLt plans on one device, one per {@link GemmSpec}, each with up to {@code candidates}
 * heuristic algorithms (the options' {@code BackendChoices.gemmCandidates}) for a workspace of
 * {@link #WORKSPACE_BYTES}. Owns the handle and the plans. In strict determinism mode the
 * candidates are those without split-K, and a GEMM with none is refused (typed, naming it).
 */
final class GemmPlans implements AutoCloseable {
    /** The cuBLASLt workspace every GEMM step gets. */
    static final long WORKSPACE_BYTES = 32L << 20;

    private final CublasLtHandle lt;
    private final int candidates;
    private final boolean deterministic;
    private final Map<GemmSpec, CublasLtGemm> plans = new LinkedHashMap<>();

    GemmPlans(CudaDevice device, int candidates, boolean deterministic) {
        this.lt = CublasLtHandle.create(device);
        this.candidates = candidates;
        this.deterministic = deterministic;
    }

    /** The plan of {@code spec}, made on first use. */
    CublasLtGemm plan(GemmSpec spec) {
        CublasLtGemm p = plans.computeIfAbsent(spec, sp -> lt.plan(sp, WORKSPACE_BYTES, candidates, deterministic));
        if (deterministic && p.candidates().isEmpty()) {
            // with no candidate, a run lets cuBLASLt choose, and its choice may split K
            throw new NondeterministicKernelException("gemm " + Autotuner.gemmKey(spec, "").replaceAll("\\.$", ""),
                    "cuBLASLt offers no algorithm without split-K for it within a " + (WORKSPACE_BYTES >> 20) + " MiB workspace");
        }
        return p;
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
