package dev.lantern.engine;

import dev.lantern.ir.LanternException;

/**
 * Choices a backend makes that change the compiled result but are not facts of a kernel or of the
 * device: part of {@link CompileOptions} and so of every cache key. The defaults are what the
 * benchmarks measured fastest on the H200; the others are ablation switches (docs/perf-notes.md).
 *
 * @param residualInGemm       the CUDA pipeline writes the residual stream from the GEMM epilogue
 *                             (through cuBLASLt's C) rather than from a norm's prologue
 * @param queryRopeInAttention the attention kernel rotates q itself where its tile can, instead of
 *                             a rope kernel before it
 * @param gemmCandidates       how many cuBLASLt heuristic candidates a GEMM plan asks for and the
 *                             autotuner times (1..128)
 */
public record BackendChoices(boolean residualInGemm, boolean queryRopeInAttention, int gemmCandidates) {
    public static final int DEFAULT_GEMM_CANDIDATES = 16;

    public BackendChoices {
        if (gemmCandidates < 1 || gemmCandidates > 128) {
            throw new LanternException("gemmCandidates must be 1..128, found " + gemmCandidates);
        }
    }

    public static BackendChoices defaults() {
        return new BackendChoices(true, true, DEFAULT_GEMM_CANDIDATES);
    }

    public BackendChoices withResidualInGemm(boolean b) {
        return new BackendChoices(b, queryRopeInAttention, gemmCandidates);
    }

    public BackendChoices withQueryRopeInAttention(boolean b) {
        return new BackendChoices(residualInGemm, b, gemmCandidates);
    }

    public BackendChoices withGemmCandidates(int n) {
        return new BackendChoices(residualInGemm, queryRopeInAttention, n);
    }

    /** The choices that differ from the defaults, as the cache key spells them ("" for the defaults). */
    String keyText() {
        BackendChoices d = defaults();
        StringBuilder b = new StringBuilder();
        if (residualInGemm != d.residualInGemm) {
            b.append(";residualInGemm=").append(residualInGemm);
        }
        if (queryRopeInAttention != d.queryRopeInAttention) {
            b.append(";queryRopeInAttention=").append(queryRopeInAttention);
        }
        if (gemmCandidates != d.gemmCandidates) {
            b.append(";gemmCandidates=").append(gemmCandidates);
        }
        return b.toString();
    }
}
