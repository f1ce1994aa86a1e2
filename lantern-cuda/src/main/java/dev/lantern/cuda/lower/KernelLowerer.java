package dev.lantern.cuda.lower;

import dev.lantern.kernel.Kernel;

/**
 * Lowers one kind of kernel (GEMMs, attention, norms, ...) to device steps through the shared
 * {@link LoweringContext}. {@link CudaLowering} keeps one per op in a table.
 */
@FunctionalInterface
interface KernelLowerer {
    void lower(Kernel k, LoweringContext cx);
}
