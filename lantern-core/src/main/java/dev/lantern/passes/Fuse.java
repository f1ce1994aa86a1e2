package dev.lantern.passes;

import dev.lantern.ir.Graph;
import dev.lantern.ir.Verifier;

import java.util.List;

/**
 * fuse: the fusion passes that follow autocast, in order: GEMM epilogues first (they take the
 * bias, activation, output cast and residual adds next to a matmul), then norms (residual
 * prologues, output casts, softmax scales), then what elementwise chains remain. Attention is
 * fused earlier, before autocast ({@link FuseAttention}). Each sub-pass also runs alone by name.
 */
public final class Fuse implements Pass {
    private final List<Pass> steps;
    private final boolean residualStreamInGemm;

    /** The default forms (the CPU pipeline, {@code lantern opt --passes fuse}). */
    public Fuse() {
        this(false);
    }

    /** {@code residualStreamInGemm}: see {@link FuseGemmEpilogue#FuseGemmEpilogue(boolean)} (the CUDA pipeline). */
    public Fuse(boolean residualStreamInGemm) {
        this.steps = steps(residualStreamInGemm);
        this.residualStreamInGemm = residualStreamInGemm;
    }

    private static List<Pass> steps(boolean residualStreamInGemm) {
        return List.of(new FuseGemmEpilogue(residualStreamInGemm), new FuseNorm(), new FuseElementwise());
    }

    @Override
    public String name() {
        return residualStreamInGemm ? "fuse-cuda" : "fuse";
    }

    @Override
    public String summary() {
        return residualStreamInGemm ? "fuse-gemm-cuda, then fuse-norm, then fuse-elementwise (the CUDA pipeline's fuse)"
                : "fuse-gemm, then fuse-norm, then fuse-elementwise";
    }

    @Override
    public Graph run(Graph g) {
        Verifier.verify(g, name());
        for (Pass p : steps) {
            g = p.run(g);
        }
        return g;
    }
}
