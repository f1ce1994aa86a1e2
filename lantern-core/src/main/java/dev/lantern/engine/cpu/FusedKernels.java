package dev.lantern.engine.cpu;

import dev.lantern.cpu.Attention;
import dev.lantern.cpu.BinaryFn;
import dev.lantern.cpu.Elementwise;
import dev.lantern.cpu.ElementwiseProgram;
import dev.lantern.cpu.Gemm;
import dev.lantern.cpu.GemmEpilogue;
import dev.lantern.cpu.Norm;
import dev.lantern.cpu.NormWeightGrad;
import dev.lantern.cpu.OpKernels;
import dev.lantern.cpu.PackedWeight;
import dev.lantern.cpu.Rope;
import dev.lantern.cpu.UnaryFn;
import dev.lantern.cpu.View;
import dev.lantern.ir.Attrs;
import dev.lantern.ir.ElementwiseExpr;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.KernelLowering;

import java.util.List;

/**
 * Runs one {@link Kernel} on the CPU backend's kernels (package {@code dev.lantern.cpu}): the
 * fusion-made ops here, every primitive op through {@link OpKernels}. {@link #prepare} does all
 * per-kernel decisions once (the epilogue, the elementwise program) and returns what runs per
 * forward, so a forward is a loop over ready closures.
 *
 * <p>Two pieces the backend lacks are composed here: a gemm with two residuals (the backend's
 * epilogue takes one; the second is added in place right after, while C is still in cache), and
 * attention: {@link HeadAttention} (two GEMMs per head, rope while loading) when the kernel's
 * strategy is {@code per_head_gemm}; otherwise the backend's flash kernel, with q and k rotated
 * into the kernel's planned scratch first. Each is one kernel in the schedule and in the plan.
 */
public final class FusedKernels {
    private FusedKernels() {}

    /** One kernel bound to its operands: inputs, output and scratch as views. */
    @FunctionalInterface
    public interface Bound {
        void run(List<View> in, View out, List<View> scratch);
    }

    public static Bound prepare(Kernel k) {
        return prepare(k, null);
    }

    /**
     * As {@link #prepare(Kernel)}, with B (input 1) of a gemm or matmul kernel already packed
     * (a weight, packed at bind by {@link #weightOperand}'s view); null: B is packed per call.
     */
    public static Bound prepare(Kernel k, PackedWeight packedB) {
        Node n = k.node();
        Attrs a = n.op().withDefaults(n.attrs());
        if (packedB != null && n.op() == Op.MATMUL) {
            boolean ta = a.getBool("transpose_a", false);
            return (in, out, ws) -> Gemm.matmul(in.get(0), packedB, out, ta, GemmEpilogue.NONE);
        }
        return switch (n.op()) {
            case GEMM -> gemm(a, packedB);
            case ATTENTION -> KernelLowering.ATTENTION_PER_HEAD.equals(k.key().specialization().get("strategy"))
                    ? headAttention(a, k) : attention(a);
            case FUSED_NORM -> norm(a);
            case NORM_WEIGHT_GRAD -> {
                boolean layer = a.getString("kind", "rms").equals("layer");
                float eps = (float) a.getDouble("eps", 1e-6);
                yield (in, out, ws) -> NormWeightGrad.run(in.get(0), in.get(1), layer, eps, out);
            }
            case ELEMENTWISE_FUSED -> {
                ElementwiseProgram p = ExprProgram.compile(ElementwiseExpr.parse(a.getString("expr", "")), n.inputs().size());
                yield (in, out, ws) -> p.run(in, List.of(out));
            }
            default -> (in, out, ws) -> OpKernels.run(n, in, out);
        };
    }

    /**
     * B of a gemm or matmul kernel as the (K, N) operand {@link PackedWeight} packs (the transpose
     * read as strides), when {@code b} is a 2-D view; otherwise null (batched B, or another kernel).
     */
    public static View weightOperand(Kernel k, View b) {
        Op op = k.node().op();
        if ((op != Op.GEMM && op != Op.MATMUL) || b == null || !PackedWeight.packable(b)) {
            return null;
        }
        boolean tb = op.withDefaults(k.node().attrs()).getBool("transpose_b", false);
        return tb ? b.permute(new int[] {1, 0}) : b;
    }

    private static Bound gemm(Attrs a, PackedWeight packedB) {
        boolean bias = a.getBool("bias", false);
        boolean ta = a.getBool("transpose_a", false);
        boolean tb = a.getBool("transpose_b", false);
        UnaryFn act = switch (a.getString("act", "none")) {
            case "gelu_tanh" -> UnaryFn.GELU_TANH;
            case "gelu_erf" -> UnaryFn.GELU_ERF;
            case "relu" -> UnaryFn.RELU;
            case "silu" -> UnaryFn.SILU;
            default -> UnaryFn.IDENTITY;
        };
        return (in, out, ws) -> {
            int next = 2;
            GemmEpilogue ep = GemmEpilogue.NONE.withAct(act);
            if (bias) {
                ep = ep.withBias(in.get(next++));
            }
            if (next < in.size()) {
                ep = ep.withResidual(in.get(next++));
            }
            if (next < in.size()) {
                // a pre-norm block's down projection + x + attn: the second add in the same pass over C
                // (it was an elementwise pass of its own: about 20 µs of cpu-small's forward at one thread)
                ep = ep.withResidual2(in.get(next++));
            }
            if (packedB != null) {
                Gemm.matmul(in.get(0), packedB, out, ta, ep);
            } else {
                Gemm.matmul(in.get(0), in.get(1), out, ta, tb, ep);
            }
            for (; next < in.size(); next++) {
                Elementwise.binary(BinaryFn.ADD, out, in.get(next), out);
            }
        };
    }

    private static Bound attention(Attrs a) {
        boolean rope = a.getBool("rope", false);
        double base = a.getDouble("rope_base", 10000);
        float scale = (float) a.getDouble("scale", 1);
        boolean causal = a.getBool("causal", false);
        int[] perm = a.getInts("out_perm");
        int[] inverse = perm == null ? null : inverse(perm);
        return (in, out, ws) -> {
            View q = in.get(0);
            View k = in.get(1);
            if (rope) {
                Rope.run(q, ws.get(0), base, 0);
                Rope.run(k, ws.get(1), base, 0);
                q = ws.get(0);
                k = ws.get(1);
            }
            // out holds (b, s, h, e) when out_perm=[0,2,1,3]: attention writes its (b, h, s, e) view of it
            Attention.run(q, k, in.get(2), in.size() > 3 ? in.get(3) : null, inverse == null ? out : out.permute(inverse), scale, causal);
        };
    }

    private static Bound headAttention(Attrs a, Kernel k) {
        boolean rope = a.getBool("rope", false);
        float scale = (float) a.getDouble("scale", 1);
        boolean causal = a.getBool("causal", false);
        int[] perm = a.getInts("out_perm");
        int[] inverse = perm == null ? null : inverse(perm);
        int rows = (int) Math.max(k.inputs().get(0).shape().dim(2), k.inputs().get(1).shape().dim(2));
        float[][] tables = rope ? HeadAttention.ropeTables(rows, k.inputs().get(0).shape().dim(3), a.getDouble("rope_base", 10000)) : null;
        return (in, out, ws) -> HeadAttention.run(in.get(0), in.get(1), in.get(2), in.size() > 3 ? in.get(3) : null,
                inverse == null ? out : out.permute(inverse),
                scale, causal, rope ? tables[0] : null, rope ? tables[1] : null);
    }

    private static Bound norm(Attrs a) {
        boolean rms = a.getString("kind", "rms").equals("rms");
        boolean res = a.getBool("residual", false);
        float eps = (float) a.getDouble("eps", 1e-6);
        return (in, out, ws) -> {
            View residual = res ? in.get(1) : null;
            int w = res ? 2 : 1;
            if (rms) {
                Norm.rmsNorm(in.get(0), residual, in.get(w), eps, out, null);
            } else {
                Norm.layerNorm(in.get(0), residual, in.get(w), in.size() > w + 1 ? in.get(w + 1) : null, eps, out, null);
            }
        };
    }

    static int[] inverse(int[] perm) {
        int[] inv = new int[perm.length];
        for (int i = 0; i < perm.length; i++) {
            inv[perm[i]] = i;
        }
        return inv;
    }

    /** Whether {@code op} has a CPU kernel here (the fused ones) or in the backend's table. */
    public static boolean supports(Op op) {
        return !op.isSource();
    }
}
