package dev.lantern.passes;

import dev.lantern.ir.Node;
import dev.lantern.ir.Op;

import java.util.Map;
import java.util.Set;

/**
 * Which op inputs a CPU (and later CUDA) kernel reads through arbitrary element strides, so that a
 * permute feeding them can stay a free view instead of a copy. Everything else reads contiguous
 * memory. This is a backend fact that layout normalization consults: a table, not a switch.
 */
final class StridedReads {
    private StridedReads() {}

    /** op -> input positions read with strides. */
    private static final Map<Op, Set<Integer>> TABLE = Map.of(
            Op.MATMUL, Set.of(0, 1),     // GEMM packs panels of a and b: any strides
            Op.GEMM, Set.of(0, 1),
            Op.ATTENTION, Set.of(0, 1, 2), // loads (seq, head_dim) tiles per (batch, head)
            Op.ROPE, Set.of(0),          // reads (seq, head_dim) rows per (batch, head)
            // the flash backward reads q, k, v, o and dy as (seq, head_dim) rows per (batch, head) (the CPU's
            // loadRows, CUDA's per-operand (b, h, s) strides): o and dy stay views of the (b, s, h, d) values
            Op.ATTENTION_LSE, Set.of(0, 1),
            Op.ATTENTION_GRAD_Q, Set.of(0, 1, 2, 3, 4),
            Op.ATTENTION_GRAD_KV, Set.of(0, 1, 2, 3, 4),
            Op.PERMUTE, Set.of(0));      // a permute of a view is a view (or one strided copy)

    static boolean reads(Node user, int input) {
        return TABLE.getOrDefault(user.op(), Set.of()).contains(input);
    }

    /** Whether every read of {@code value} by {@code user} goes through a strided-capable input. */
    static boolean allReadsStrided(Node user, String value) {
        for (int i = 0; i < user.inputs().size(); i++) {
            if (user.input(i).equals(value) && !reads(user, i)) {
                return false;
            }
        }
        return true;
    }
}
