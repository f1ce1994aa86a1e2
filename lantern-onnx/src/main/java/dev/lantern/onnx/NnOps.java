package dev.lantern.onnx;

import dev.lantern.frontend.Value;
import dev.lantern.ir.Attrs;
import dev.lantern.ir.Op;

import java.util.Map;

/** Matrix products, softmax, norms and GELU: the ONNX ops that map onto Lantern's non-elementwise ops. */
final class NnOps {
    private NnOps() {}

    static void register(Map<String, OpImporter> t) {
        t.put("MatMul", NnOps::matmul);
        t.put("Gemm", NnOps::gemm);
        t.put("Softmax", NnOps::softmax);
        t.put("LayerNormalization", NnOps::layerNorm);
        t.put("SimplifiedLayerNormalization", NnOps::rmsNorm);
        t.put("Gelu", c -> gelu(c, Attributes.getString(c, "approximate", "none").equals("tanh")));
        t.put("com.microsoft.Gelu", c -> gelu(c, false));
        t.put("com.microsoft.FastGelu", c -> gelu(c, true));
        t.put("com.microsoft.SimplifiedLayerNormalization", NnOps::rmsNorm);
        t.put("dev.lantern.Silu", c -> c.output(0, c.op(Op.SILU, Attrs.EMPTY, c.run(0))));
    }

    /** NumPy matmul: a 1-D operand gains a unit axis for the product and loses it after. */
    private static void matmul(ImportContext c) {
        if (c.allHost() && FoldOps.matmulFoldable(c.dimsOf(0), c.dimsOf(1))) {
            // LLaMA's rotary angles: inv_freq (a weight) times the positions (from the shapes), folded
            c.output(0, FoldOps.matmul(c, c.host(0), c.host(1)));
            return;
        }
        Value a = c.run(0);
        Value b = c.run(1);
        int ra = a.shape().rank();
        int rb = b.shape().rank();
        if (ra == 0 || rb == 0) {
            throw c.fail("MatMul operands must have rank >= 1, found " + a.type() + " and " + b.type());
        }
        if (ra == 1) {
            a = c.builder.reshape(a, 1, a.shape().dim(0));
        }
        if (rb == 1) {
            b = c.builder.reshape(b, b.shape().dim(0), 1);
        }
        Value y = c.builder.matmul(a, b);
        if (ra == 1 || rb == 1) {
            int[] d = y.shape().dims();
            int[] out = new int[d.length - (ra == 1 ? 1 : 0) - (rb == 1 ? 1 : 0)];
            System.arraycopy(d, 0, out, 0, d.length - 2);
            if (ra != 1) {
                out[d.length - 2] = d[d.length - 2];
            }
            if (rb != 1) {
                out[out.length - 1] = d[d.length - 1];
            }
            y = c.builder.reshape(y, out);
        }
        c.output(0, y);
    }

    /** alpha · op(A) · op(B) + beta · C, with C broadcast to (M, N). */
    private static void gemm(ImportContext c) {
        Value a = c.run(0);
        Value b = c.run(1);
        if (a.shape().rank() != 2 || b.shape().rank() != 2) {
            throw c.fail("Gemm takes 2-D A and B, found " + a.type() + " and " + b.type());
        }
        double alpha = Attributes.getFloat(c, "alpha", 1.0);
        double beta = Attributes.getFloat(c, "beta", 1.0);
        Attrs t = Attrs.of("transpose_a", Attributes.getInt(c, "transA", 0) != 0, "transpose_b", Attributes.getInt(c, "transB", 0) != 0);
        Value y = c.op(Op.MATMUL, t, a, b);
        if (alpha != 1.0) {
            y = c.builder.mul(y, c.builder.constant(alpha, y.type().dtype()));
        }
        if (c.hasInput(2) && beta != 0.0) {
            Value bias = c.run(2);
            if (beta != 1.0) {
                bias = c.builder.mul(bias, c.builder.constant(beta, bias.type().dtype()));
            }
            y = c.builder.add(y, bias);
        }
        c.output(0, y);
    }

    /** Softmax over one axis; an axis other than the last is moved last and back. */
    private static void softmax(ImportContext c) {
        Value x = c.run(0);
        int rank = x.shape().rank();
        if (rank == 0) {
            throw c.fail("Softmax needs rank >= 1");
        }
        int axis = c.axis(Attributes.getInt(c, "axis", -1), rank);
        if (axis == rank - 1) {
            c.output(0, c.builder.softmax(x, false, 1.0));
            return;
        }
        int[] perm = new int[rank];
        for (int i = 0; i < rank; i++) {
            perm[i] = i;
        }
        perm[axis] = rank - 1;
        perm[rank - 1] = axis;
        Value moved = c.builder.permute(x, perm);
        c.output(0, c.builder.permute(c.builder.softmax(moved, false, 1.0), perm));
    }

    private static void layerNorm(ImportContext c) {
        Value x = c.run(0);
        lastAxisOnly(c, x);
        Value w = vector(c, 1, x);
        double eps = Attributes.getFloat(c, "epsilon", 1e-5);
        Value y = c.hasInput(2) ? c.builder.layerNorm(x, w, vector(c, 2, x), eps) : c.op(Op.LAYER_NORM, Attrs.of("eps", eps), x, w);
        c.output(0, y);
    }

    private static void rmsNorm(ImportContext c) {
        Value x = c.run(0);
        lastAxisOnly(c, x);
        c.output(0, c.builder.rmsNorm(x, vector(c, 1, x), Attributes.getFloat(c, "epsilon", 1e-5)));
    }

    private static void lastAxisOnly(ImportContext c, Value x) {
        int rank = x.shape().rank();
        if (rank == 0 || c.axis(Attributes.getInt(c, "axis", -1), rank) != rank - 1) {
            throw ElementwiseOps.unsupported(c, "over axes other than the last");
        }
        for (int i = 1; i < c.node().getOutputCount(); i++) {
            if (!c.node().getOutput(i).isEmpty()) {
                throw ElementwiseOps.unsupported(c, "with its mean / inverse-deviation outputs");
            }
        }
    }

    /** A norm's scale or bias as the [D] vector Lantern's norms take ([1, D] and the like are reshaped). */
    private static Value vector(ImportContext c, int i, Value x) {
        Value v = c.run(i);
        int d = x.shape().last();
        if (v.shape().rank() == 1 && v.shape().dim(0) == d) {
            return v;
        }
        if (v.shape().numel() == d && v.shape().last() == d) {
            return c.builder.reshape(v, d);
        }
        throw c.fail("input " + i + " must hold one value per element of the last axis (" + d + "), found " + v.type());
    }

    private static void gelu(ImportContext c, boolean tanh) {
        Value x = c.run(0);
        if (c.hasInput(1)) { // FastGelu's optional bias
            x = c.builder.add(x, c.run(1));
        }
        c.output(0, c.builder.gelu(x, tanh));
    }
}
