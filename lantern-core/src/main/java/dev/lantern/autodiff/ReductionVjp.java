package dev.lantern.autodiff;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;

import java.util.Map;

/**
 * reduce_sum and the loss. reduce_sum's gradient is dy put back on the reduced axes (as size 1)
 * and repeated over them; cross_entropy's is one row-wise op, (softmax − onehot)·dloss/count,
 * which never materialises a one-hot tensor nor the log-probabilities.
 */
final class ReductionVjp {
    private ReductionVjp() {}

    static void register(Map<Op, VjpRule> t) {
        t.put(Op.REDUCE_SUM, (n, dy, need, b) -> {
            Shape x = b.shape(n.input(0));
            int[] kept = x.dims();
            for (int ax : n.attrs().getInts("axes")) {
                kept[MovementVjp.axis(ax, x.rank())] = 1;
            }
            return new String[] {b.broadcastTo(b.reshape(dy, Shape.of(kept)), b.type(n.input(0)))};
        });
        t.put(Op.CROSS_ENTROPY, (n, dy, need, b) -> new String[] {
                need[0] ? b.op(Op.CROSS_ENTROPY_GRAD,
                        Attrs.of("ignore_index", n.op().withDefaults(n.attrs()).getLong("ignore_index", -100)),
                        n.input(0), n.input(1), dy) : null,
                null});
    }
}
