package dev.lantern.cuda.engine;

import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.lower.Step;
import java.util.List;

/**
 * What the {@link Autotuner} runs its variants with: a launch of a kernel variant, or a GEMM step
 * with a given cuBLASLt candidate, bound to real buffers. The executor is one.
 */
interface StepRunner {
    Runnable launch(CudaKernelSource src, List<Step.Arg> args);

    Runnable gemm(Step.Gemm step, int candidate);

    /** How many heuristic candidates cuBLASLt returned for {@code spec}. */
    int available(GemmSpec spec);
}
