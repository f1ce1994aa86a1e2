package dev.lantern.cuda.engine;

import dev.lantern.cuda.blas.CublasLtGemm;
import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.driver.CudaModule;
import dev.lantern.cuda.lower.CudaLowering;
import dev.lantern.cuda.lower.Step;
import dev.lantern.engine.CompiledModel;
import dev.lantern.plan.MemoryPlan;
import java.util.List;

/**
 * A compiled model made ready for one GPU by the {@link CudaCompiler}: its device steps in stream
 * order, every generated kernel loaded, every GEMM planned, and the memory plans (the core's arena
 * plan, the transient area's plan, the scratch buffers). It holds no device memory and launches
 * nothing: the {@link CudaExecutor} does.
 */
public final class CudaProgram {
    private final CompiledModel model;
    private final CudaLowering.Lowered lowered;
    private final KernelLoader kernels;
    private final GemmPlans gemms;
    private final OutputStorage storage;

    CudaProgram(CompiledModel model, CudaLowering.Lowered lowered, KernelLoader kernels, GemmPlans gemms) {
        this.model = model;
        this.lowered = lowered;
        this.kernels = kernels;
        this.gemms = gemms;
        this.storage = new OutputStorage(model);
    }

    public CompiledModel model() {
        return model;
    }

    public CudaLowering.Lowered lowered() {
        return lowered;
    }

    public List<Step> steps() {
        return lowered.steps();
    }

    /** The arena plan of the compiled (fused) forward. */
    public MemoryPlan plan() {
        return model.plan();
    }

    /** Where {@code value}'s bytes are: {@link OutputStorage#of}. */
    public String storageOf(String value) {
        return storage.of(value);
    }

    /** {@code src}'s loaded kernel (a variant the autotuner renders is loaded on first use). */
    CudaModule.CudaKernel kernel(CudaKernelSource src) {
        return kernels.load(src);
    }

    /** {@code spec}'s cuBLASLt plan (a split variant the autotuner times is planned on first use). */
    CublasLtGemm gemm(GemmSpec spec) {
        return gemms.plan(spec);
    }

    /** How many cuBLASLt candidates a GEMM may choose among. */
    int gemmCandidates() {
        return gemms.candidates();
    }
}
