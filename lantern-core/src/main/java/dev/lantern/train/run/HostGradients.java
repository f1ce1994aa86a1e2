package dev.lantern.train.run;

import dev.lantern.ir.DType;
import dev.lantern.tensor.Tensor;
import dev.lantern.train.MultiTensor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.List;

/**
 * A step's gradients into the parameters' f32 gradient tensors on the host: the first micro-batch's
 * copied, each later one's added element by element in micro-batch order (the same sums on any
 * thread count: the multi-tensor pass splits by element, never within one element's sum).
 */
final class HostGradients {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private HostGradients() {}

    /** {@code grads} (in {@code plan}'s parameter order, any float dtype) into the gradients: added when {@code add}, else copied. */
    static void collect(MultiTensor plan, List<Tensor> grads, boolean add) {
        List<Tensor> g32 = grads.stream().map(g -> g.dtype() == DType.F32 ? g : g.cast(DType.F32)).toList();
        if (!add) {
            for (int i = 0; i < g32.size(); i++) {
                MemorySegment.copy(g32.get(i).segment(), 0, plan.params().get(i).grad().segment(), 0, plan.params().get(i).numel() * 4);
            }
            return;
        }
        plan.forEach((p, i, start, end) -> {
            MemorySegment src = g32.get(i).segment();
            MemorySegment dst = p.grad().segment();
            for (long e = start; e < end; e++) {
                dst.setAtIndex(F32, e, dst.getAtIndex(F32, e) + src.getAtIndex(F32, e));
            }
        });
    }
}
