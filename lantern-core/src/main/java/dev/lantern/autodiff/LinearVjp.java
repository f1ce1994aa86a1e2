package dev.lantern.autodiff;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;

import java.util.Map;

/**
 * matmul: C = op(A)·op(B), op a transpose when the attribute says so, batch axes broadcast.
 * d op(A) = dC·op(B)ᵀ and d op(B) = op(A)ᵀ·dC, each written as one matmul whose transpose flags
 * read A, B and dC as stored (no transposed copy), then summed over the batch axes that the
 * operand was broadcast along. The common case of a weight, B of rank 2 under a batched A (a
 * linear layer over (batch, seq, in)), folds the batch into the rows instead: dB = A₂ᵀ·dC₂ with
 * A₂ (b·s, in) and dC₂ (b·s, out), one GEMM that sums over every row as it goes, where the general
 * rule would write a (batch, in, out) product per batch and reduce it after. dB is emitted before
 * dA: A is often a saved activation read last by dB (the MLP's GELU output), so it is dead before
 * dA, as large, is written; the other order holds both at once at a training step's peak.
 */
final class LinearVjp {
    private LinearVjp() {}

    static void register(Map<Op, VjpRule> t) {
        t.put(Op.MATMUL, LinearVjp::matmul);
    }

    private static String[] matmul(Node n, String dc, boolean[] need, GradientBuilder b) {
        Attrs at = n.op().withDefaults(n.attrs());
        boolean ta = at.getBool("transpose_a", false);
        boolean tb = at.getBool("transpose_b", false);
        String a = n.input(0);
        String bb = n.input(1);
        String da = null;
        String db = null;
        if (need[1] && b.shape(bb).rank() == 2 && b.shape(a).rank() > 2 && !ta) {
            Shape as = b.shape(a);
            Shape cs = b.shape(dc);
            // B has no batch axes, so dC's batch is A's: (..., M) flattens to the same rows on both sides
            long rowCount = 1; // the leading dims' product, not numel / K: K may be 0
            for (int i = 0; i < as.rank() - 1; i++) {
                rowCount *= as.dim(i);
            }
            int rows = Math.toIntExact(rowCount);
            String a2 = b.reshape(a, Shape.of(rows, as.dim(-1)));
            String c2 = b.reshape(dc, Shape.of(rows, cs.dim(-1)));
            db = tb ? b.op(Op.MATMUL, flags(true, false), c2, a2) : b.op(Op.MATMUL, flags(true, false), a2, c2);
        } else if (need[1]) {
            // B (K, N): op(A)ᵀ·dC; B stored (N, K): (op(A)ᵀ·dC)ᵀ = dCᵀ·op(A)
            db = tb ? b.op(Op.MATMUL, flags(true, ta), dc, a) : b.op(Op.MATMUL, flags(!ta, false), a, dc);
            db = b.sumTo(db, b.shape(bb));
        }
        if (need[0]) {
            // A (M, K): dC·op(B)ᵀ; A stored (K, M): (dC·op(B)ᵀ)ᵀ = op(B)·dCᵀ
            da = ta ? b.op(Op.MATMUL, flags(tb, true), bb, dc) : b.op(Op.MATMUL, flags(false, !tb), dc, bb);
            da = b.sumTo(da, b.shape(a));
        }
        return new String[] {da, db};
    }

    private static Attrs flags(boolean ta, boolean tb) {
        Attrs a = Attrs.EMPTY;
        if (ta) {
            a = a.with("transpose_a", true);
        }
        return tb ? a.with("transpose_b", true) : a;
    }
}
