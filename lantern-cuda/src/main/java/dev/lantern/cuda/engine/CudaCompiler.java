package dev.lantern.cuda.engine;

import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.codegen.KernelSpec;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.lower.CudaLowering;
import dev.lantern.cuda.lower.Step;
import dev.lantern.cuda.lower.StrictKernels;
import dev.lantern.engine.CompiledModel;
import dev.lantern.trace.Span;
import dev.lantern.trace.Tracing;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Compiled model -> {@link CudaProgram} for one GPU: lowers the kernel list to device steps
 * ({@link CudaLowering}), compiles and loads every generated kernel (NVRTC through the module
 * cache) and plans every cuBLASLt GEMM. Compiling is apart from running: nothing here allocates
 * tensors or launches. The loaded modules and plans live as long as the compiler (one per session),
 * so a program compiled again after autotuning shares what did not change.
 */
final class CudaCompiler implements AutoCloseable {
    private final CudaTarget target;
    private final KernelLoader kernels;
    private final GemmPlans gemms;

    private final boolean deterministic;

    /** {@code deterministic}: strict mode (GEMMs without split-K, kernels with atomics refused). */
    CudaCompiler(CudaDevice device, CudaTarget target, int gemmCandidates, boolean deterministic) {
        this.target = target;
        this.deterministic = deterministic;
        this.kernels = new KernelLoader(device);
        GemmPlans g = null;
        try {
            g = new GemmPlans(device, gemmCandidates, deterministic);
        } finally {
            if (g == null) {
                kernels.close();
            }
        }
        this.gemms = g;
    }

    CudaTarget target() {
        return target;
    }

    /**
     * {@code model} (compiled for cuda) as a program, each generated kernel rendered for the target
     * {@code tuned} picks for it, the GELU-epilogue GEMMs that {@code splitGelu} names split.
     */
    CudaProgram compile(CompiledModel model, Function<KernelSpec, CudaTarget> tuned, Predicate<GemmSpec> splitGelu) {
        CudaLowering.Lowered lowered;
        try (Span span = Tracing.span("cuda lowering", "compile")) {
            lowered = CudaLowering.lower(model, target, tuned, splitGelu);
        }
        try (Span span = Tracing.span("load kernels and plan gemms", "compile")) {
            loadAll(lowered);
        }
        return new CudaProgram(model, lowered, kernels, gemms);
    }

    /** Every generated kernel compiled (or found in the module cache) and loaded, every GEMM planned. */
    private void loadAll(CudaLowering.Lowered lowered) {
        for (Step s : lowered.steps()) {
            switch (s) {
                case Step.Launch l -> {
                    if (deterministic) {
                        StrictKernels.check(l.source()); // before NVRTC: a refused kernel costs no compile
                    }
                    kernels.load(l.source());
                }
                case Step.Gemm g -> gemms.plan(g.spec());
            }
        }
    }

    @Override
    public void close() {
        try {
            gemms.close();
        } finally {
            kernels.close();
        }
    }
}
