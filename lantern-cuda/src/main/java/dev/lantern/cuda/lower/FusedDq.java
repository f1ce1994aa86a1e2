package dev.lantern.cuda.lower;

import dev.lantern.cuda.codegen.AttentionBackwardSpec;
import dev.lantern.ir.DType;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.Operand;

/**
 * When attention's dq joins its grad_kv kernel (GRAD_KVQ, {@link AttentionBackwardSpec#fusedDqPath}):
 * autodiff writes attention_grad_q just before attention_grad_kv over the same operands; outside
 * strict mode, on a GPU with wgmma, at head_dim 128 in bf16/f16 without a mask, grad_q's write is
 * deferred to grad_kv's launch when {@link DeferredWrite#partner} says it is safe. grad_kv's CTAs then
 * add dq into an f32 accumulator with atomics: one product instead of grad_q's second pass over K
 * and V, in an order that changes from run to run (which is why strict mode keeps both kernels).
 */
final class FusedDq {
    private FusedDq() {}

    /** The attention_grad_kv kernel that writes {@code gradQ}'s dq too, or null when grad_q keeps its own kernel. */
    static Kernel partner(Kernel gradQ, LoweringContext cx) {
        Node n = gradQ.node();
        if (n.op() != Op.ATTENTION_GRAD_Q || gradQ.inputs().size() != 6 || cx.model.options().deterministic()) {
            return null;
        }
        Operand q = gradQ.inputs().get(0);
        Operand k = gradQ.inputs().get(1);
        if (q.shape().rank() != 4 || k.shape().rank() != 4 || q.dtype() != k.dtype() || gradQ.output().dtype() != q.dtype()
                || (q.dtype() != DType.BF16 && q.dtype() != DType.F16)) {
            return null;
        }
        int h = q.shape().dim(1);
        int hk = k.shape().dim(1);
        if (hk == 0 || h % hk != 0) {
            return null;
        }
        boolean causal = n.attrs().getBool("causal", false);
        double scale = n.attrs().getDouble("scale", 1.0);
        AttentionBackwardSpec probe = new AttentionBackwardSpec("lt_probe", AttentionBackwardSpec.Kind.GRAD_KVQ, q.shape().dim(0), h, h / hk,
                q.shape().dim(2), k.shape().dim(2), q.shape().dim(3), causal, scale, q.dtype(), false);
        if (!probe.fusedDqPath(cx.target)) {
            return null;
        }
        return DeferredWrite.partner(gradQ, cx, kv -> kv.node().op() == Op.ATTENTION_GRAD_KV && kv.inputs().size() == 6
                && kv.node().attrs().getBool("causal", false) == causal && kv.node().attrs().getDouble("scale", 1.0) == scale
                && sameOperands(gradQ, kv));
    }

    private static boolean sameOperands(Kernel a, Kernel b) {
        for (int i = 0; i < 6; i++) {
            if (!DeferredWrite.same(a.inputs().get(i), b.inputs().get(i))) {
                return false;
            }
        }
        return true;
    }
}
