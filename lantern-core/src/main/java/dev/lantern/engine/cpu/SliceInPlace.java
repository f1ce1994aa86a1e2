package dev.lantern.engine.cpu;

import dev.lantern.ir.Graph;
import dev.lantern.ir.Op;
import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.KernelLowering;
import dev.lantern.kernel.Operand;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The slices the CPU executor reads in place instead of copying: GPT-2's q, k and v are column blocks of
 * one q|k|v projection, and the attention kernels read views of any strides, so the three copies a layer
 * (1.5 ms of GPT-2-small's 320 ms forward at batch 1, 18 ms of 2.6 s at batch 8, one thread) are not
 * needed. As the CUDA backend's {@code SliceAlias}: taken only when every kernel that reads the slice's
 * storage (through free views too) is an attention kernel and no graph output is stored there; the
 * memory plan then keeps the source alive until the last of those readers ({@code
 * MemoryPlanner.keepSlicedSources}), so the source still holds its values when they run.
 */
public final class SliceInPlace {
    private SliceInPlace() {}

    /** The names of the slice nodes (each its kernel's output) read in place in {@code kernels} of {@code g}. */
    public static Set<String> of(Graph g, List<Kernel> kernels) {
        Set<String> outputStorage = new HashSet<>();
        for (String out : g.outputs()) {
            outputStorage.add(KernelLowering.storage(g, out));
        }
        Set<String> inPlace = new HashSet<>();
        for (Kernel k : kernels) {
            String out = k.output().value();
            if (k.node().op() != Op.SLICE || k.inputs().isEmpty() || !k.sideOutputs().isEmpty() || outputStorage.contains(out)) {
                continue;
            }
            boolean read = false;
            boolean onlyAttention = true;
            for (Kernel r : kernels) {
                for (Operand o : r.inputs()) {
                    if (o.storage().equals(out)) {
                        read = true;
                        onlyAttention &= r.node().op() == Op.ATTENTION;
                    }
                }
            }
            if (read && onlyAttention) {
                inPlace.add(out);
            }
        }
        return inPlace;
    }
}
