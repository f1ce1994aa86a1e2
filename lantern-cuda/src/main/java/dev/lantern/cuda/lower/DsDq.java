package dev.lantern.cuda.lower;

import dev.lantern.cuda.codegen.AttentionBackwardSpec;
import dev.lantern.ir.DType;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.Operand;

/**
 * When attention's dq comes from the dS tiles grad_kv writes ({@link AttentionBackwardSpec#dsPath}):
 * autodiff writes attention_grad_q just before attention_grad_kv over the same operands; on a GPU
 * with wgmma, at head_dim 128 in bf16/f16 without a mask, grad_q's write is deferred to grad_kv's
 * launch when {@link DeferredWrite#partner} says it is safe. grad_kv then writes each tile's dS and
 * dq = scale · dS K is summed from them: one product where GRAD_Q recomputes three. Both run in one
 * launch through a ring of dS slots (GRAD_KV_DQ, {@link #ring}), or per chunk of the batch as
 * GRAD_KV_DS then DQ_DS ({@link #chunkBatches}). No atomics, a fixed order: strict mode takes it too.
 */
final class DsDq {
    private DsDq() {}

    /** The attention_grad_kv kernel that writes {@code gradQ}'s dq too, or null when grad_q keeps its own kernel. */
    static Kernel partner(Kernel gradQ, LoweringContext cx) {
        Node n = gradQ.node();
        if (n.op() != Op.ATTENTION_GRAD_Q || gradQ.inputs().size() != 6) {
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
        AttentionBackwardSpec probe = new AttentionBackwardSpec("lt_probe", AttentionBackwardSpec.Kind.GRAD_KV_DS, q.shape().dim(0), h, h / hk,
                q.shape().dim(2), k.shape().dim(2), q.shape().dim(3), causal, scale, q.dtype(), false);
        if (!probe.dsPath(cx.target)) {
            return null;
        }
        return DeferredWrite.partner(gradQ, cx, kv -> kv.node().op() == Op.ATTENTION_GRAD_KV && kv.inputs().size() == 6
                && kv.node().attrs().getBool("causal", false) == causal && kv.node().attrs().getDouble("scale", 1.0) == scale
                && sameOperands(gradQ, kv));
    }

    /**
     * Batches a launch pair takes: as many as keep one chunk's dS tiles within
     * {@code lantern.attention.backward.dsBytes} (160 MiB by default; at least one batch), so the
     * transient buffer stays small beside the step's arena (16 × 32 heads × 1024² causal: 570 MB of
     * tiles, four chunks of 143 MB).
     */
    static int chunkBatches(long batch, long heads, long seqQ, long seqK, boolean causal) {
        long perBatch = heads * AttentionBackwardSpec.dsTilesPerHead(seqQ, seqK, causal) * AttentionBackwardSpec.DS_TILE_BYTES;
        long cap = Long.getLong("lantern.attention.backward.dsBytes", 160L << 20);
        long fit = Math.max(1, cap / perBatch);
        long chunks = (batch + fit - 1) / fit;
        return (int) ((batch + chunks - 1) / chunks);  // as even as the chunk count allows
    }

    /**
     * Whether grad_kv and dq run as one launch through a ring of dS slots (GRAD_KV_DQ, the default)
     * rather than as GRAD_KV_DS and DQ_DS per chunk of the batch ({@code lantern.attention.backward.dsRing=false}).
     */
    static boolean ring() {
        return !"false".equals(System.getProperty("lantern.attention.backward.dsRing"));
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
