package dev.lantern.kernel;

import java.util.List;

/**
 * Lantern's first-order memory cost model: a kernel moves each input and its output through
 * DRAM once, and writes then reads back each workspace buffer. What fusion saves
 * ({@code CompiledModel.estimatedBytesSaved}) and what {@code lantern bench} divides by a kernel's
 * time to report DRAM GB/s. It ignores re-reads that miss the cache (a GEMM's tiles) and reads
 * that hit it (a small input read by the next kernel), so a figure above the device's bandwidth
 * says the data stayed in L2.
 */
public final class KernelTraffic {
    private KernelTraffic() {}

    /** Bytes {@code k} reads and writes under the model. */
    public static long bytes(Kernel k) {
        long t = 0;
        for (Operand o : k.inputs()) {
            t += o.bytes();
        }
        t += k.output().bytes();
        for (Operand o : k.sideOutputs()) {
            t += o.bytes();
        }
        for (Operand w : k.workspace()) {
            t += 2 * w.bytes();
        }
        return t;
    }

    /** Σ {@link #bytes} over {@code kernels}. */
    public static long bytes(List<Kernel> kernels) {
        long t = 0;
        for (Kernel k : kernels) {
            t += bytes(k);
        }
        return t;
    }
}
