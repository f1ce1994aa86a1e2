package dev.lantern.cpu;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.LanternException;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;

import java.util.List;

/**
 * One IR node on the CPU kernels: the table from op to kernel call. The output view is given
 * (contiguous, of the node's type); inputs may be strided. Used by {@link EagerExecutor}, and by
 * any executor that runs unfused nodes out of its own arena. Covers every primitive op and plain
 * attention; the other fusion-made ops (gemm, fused_norm, elementwise, attention with rope or
 * out_perm) throw here: they run in {@code engine.cpu.FusedKernels}, which builds them from these
 * kernels.
 */
public final class OpKernels {
    private OpKernels() {}

    public static void run(Node n, List<View> in, View out) {
        Attrs a = n.op().withDefaults(n.attrs());
        Op op = n.op();
        switch (op) {
            case INPUT, PARAM -> throw new IllegalArgumentException("sources are not kernels: " + n);
            case CONSTANT -> Elementwise.fill(out, (float) a.getDouble("value", 0));
            case ADD -> Elementwise.binary(BinaryFn.ADD, in.get(0), in.get(1), out);
            case SUB -> Elementwise.binary(BinaryFn.SUB, in.get(0), in.get(1), out);
            case MUL -> Elementwise.binary(BinaryFn.MUL, in.get(0), in.get(1), out);
            case DIV -> Elementwise.binary(BinaryFn.DIV, in.get(0), in.get(1), out);
            case GELU -> Elementwise.unary(UnaryFn.gelu(!"none".equals(a.getString("approximate", "tanh"))), in.getFirst(), out);
            case RELU -> Elementwise.unary(UnaryFn.RELU, in.getFirst(), out);
            case SILU -> Elementwise.unary(UnaryFn.SILU, in.getFirst(), out);
            case NEG -> Elementwise.unary(UnaryFn.NEG, in.getFirst(), out);
            case EXP -> Elementwise.unary(UnaryFn.EXP, in.getFirst(), out);
            case TANH -> Elementwise.unary(UnaryFn.TANH, in.getFirst(), out);
            case CAST -> Elementwise.copy(in.getFirst(), out);
            case SOFTMAX -> Softmax.run(in.getFirst(), out, (float) a.getDouble("scale", 1), a.getBool("causal", false));
            case LAYER_NORM -> Norm.layerNorm(in.get(0), null, in.get(1), in.size() > 2 ? in.get(2) : null,
                    (float) a.getDouble("eps", 1e-5), out, null);
            case RMS_NORM -> Norm.rmsNorm(in.get(0), null, in.get(1), (float) a.getDouble("eps", 1e-6), out, null);
            case ROPE -> Rope.run(in.getFirst(), out, a.getDouble("base", 10000), a.getLong("offset", 0), a.getBool("inverse", false));
            case GELU_GRAD -> Elementwise.binary("none".equals(a.getString("approximate", "tanh")) ? BinaryFn.GELU_ERF_GRAD : BinaryFn.GELU_TANH_GRAD,
                    in.get(0), in.get(1), out);
            case SILU_GRAD -> Elementwise.binary(BinaryFn.SILU_GRAD, in.get(0), in.get(1), out);
            case RELU_GRAD -> Elementwise.binary(BinaryFn.RELU_GRAD, in.get(0), in.get(1), out);
            case SOFTMAX_GRAD -> RowGrads.softmaxGrad(in.get(0), in.get(1), out, (float) a.getDouble("scale", 1));
            case RMS_NORM_GRAD -> RowGrads.normGrad(in.get(0), in.get(1), in.get(2), in.size() > 3 ? in.get(3) : null, out,
                    (float) a.getDouble("eps", 1e-6), false);
            case LAYER_NORM_GRAD -> RowGrads.normGrad(in.get(0), in.get(1), in.get(2), in.size() > 3 ? in.get(3) : null, out,
                    (float) a.getDouble("eps", 1e-5), true);
            case REDUCE_SUM -> ReduceSum.run(in.getFirst(), reduced(a.getInts("axes"), in.getFirst().rank()), out);
            case CROSS_ENTROPY -> CrossEntropy.loss(in.get(0), in.get(1), a.getLong("ignore_index", -100), out);
            case CROSS_ENTROPY_GRAD -> CrossEntropy.grad(in.get(0), in.get(1), in.get(2), a.getLong("ignore_index", -100), out);
            case ATTENTION_LSE -> AttentionBackward.lse(in.get(0), in.get(1), in.size() > 2 ? in.get(2) : null, out,
                    (float) a.getDouble("scale", 1), a.getBool("causal", false));
            case ATTENTION_GRAD_Q -> AttentionBackward.gradQ(in.get(0), in.get(1), in.get(2), in.get(3), in.get(4), in.get(5),
                    in.size() > 6 ? in.get(6) : null, out, (float) a.getDouble("scale", 1), a.getBool("causal", false));
            case ATTENTION_GRAD_KV -> AttentionBackward.gradKv(in.get(0), in.get(1), in.get(2), in.get(3), in.get(4), in.get(5),
                    in.size() > 6 ? in.get(6) : null, out, (float) a.getDouble("scale", 1), a.getBool("causal", false));
            case SCATTER_ADD -> ScatterAdd.run(in.get(0), in.get(1), axis(a.getInt("axis", 0), out.rank()), out);
            case MATMUL -> Gemm.matmul(in.get(0), in.get(1), out, a.getBool("transpose_a", false),
                    a.getBool("transpose_b", false), GemmEpilogue.NONE);
            case RESHAPE -> Copy.reshape(in.getFirst(), out);
            case PERMUTE -> Copy.run(in.getFirst().permute(a.getInts("perm")), out);
            case TRANSPOSE -> Copy.run(in.getFirst().permute(Shape.transposePerm(out.rank(), a.getInt("dim0", 0), a.getInt("dim1", 0))), out);
            case SLICE -> Copy.run(slice(in.getFirst(), a), out);
            case CONCAT -> Copy.concat(in, axis(a.getInt("axis", 0), out.rank()), out);
            case GATHER -> Gather.run(in.get(0), in.get(1), axis(a.getInt("axis", 0), in.get(0).rank()), out);
            case ATTENTION -> {
                if (a.getBool("rope", false) || a.has("out_perm")) {
                    throw fusedOnly(n);
                }
                Attention.run(in.get(0), in.get(1), in.get(2), in.size() > 3 ? in.get(3) : null, out,
                        (float) a.getDouble("scale", 1), a.getBool("causal", false));
            }
            default -> throw fusedOnly(n);
        }
    }

    /** Ops (and attention forms) that only fusion makes run in the compiled executor's kernels. */
    private static LanternException fusedOnly(Node n) {
        return new LanternException("cpu: " + n + ": no single-op kernel for this fusion-made form (run it with engine.cpu.FusedKernels)");
    }

    /** Which of {@code rank} axes reduce_sum's {@code axes} name. */
    static boolean[] reduced(int[] axes, int rank) {
        boolean[] r = new boolean[rank];
        for (int ax : axes) {
            r[axis(ax, rank)] = true;
        }
        return r;
    }

    /** The elements a slice node with attributes {@code a} takes from {@code in}: a view, no copy. */
    public static View slice(View in, Attrs a) {
        return in.slice(axis(a.getInt("axis", 0), in.rank()), a.getInt("start", 0), a.getInt("end", 0));
    }

    static int axis(int axis, int rank) {
        return axis < 0 ? axis + rank : axis;
    }
}
