package dev.lantern.reference;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.ElementwiseExpr;
import dev.lantern.ir.Node;
import dev.lantern.ir.Shape;

import java.util.List;
import java.util.function.DoubleUnaryOperator;

/**
 * float64 meaning of the ops that fusion makes (gemm, fused_norm, norm_weight_grad, elementwise,
 * attention with rope and out_perm), written as the primitive reference ops they replace, so that
 * a graph before and after any pass can be checked against the same oracle. As elsewhere in the reference, only a
 * cast rounds: {@code out=...} on a gemm or norm, and {@code cast_*} in an expression.
 */
final class CompositeRef {
    private CompositeRef() {}

    static RefTensor gemm(Node n, List<RefTensor> in, Attrs a) {
        Shape out = n.type().shape();
        RefTensor c = RefOps.matmul(in.get(0), in.get(1), a.getBool("transpose_a", false), a.getBool("transpose_b", false), out);
        int next = 2;
        if (a.getBool("bias", false)) {
            c = RefOps.binary(c, in.get(next++), out, Double::sum);
        }
        c = RefOps.unary(c, act(a.getString("act", "none")));
        for (; next < in.size(); next++) {
            c = RefOps.binary(c, in.get(next), out, Double::sum);
        }
        return rounded(c, a);
    }

    static RefTensor fusedNorm(Node n, List<RefTensor> in, Attrs a) {
        boolean res = a.getBool("residual", false);
        RefTensor h = res ? RefOps.binary(in.get(0), in.get(1), n.type().shape(), Double::sum) : in.get(0);
        int w = res ? 2 : 1;
        double eps = a.getDouble("eps", 1e-6);
        RefTensor y = a.getString("kind", "rms").equals("rms") ? RefOps.rmsNorm(h, in.get(w), eps)
                : RefOps.layerNorm(h, in.get(w), in.size() > w + 1 ? in.get(w + 1) : null, eps);
        return rounded(y, a);
    }

    /** Σ over the rows of dy·x̂, x̂ the norm of x with a weight of ones (the VJP's composition, summed in float64). */
    static RefTensor normWeightGrad(Node n, List<RefTensor> in, Attrs a) {
        RefTensor x = in.get(0);
        RefTensor dy = in.get(1);
        int d = x.shape().last();
        double[] one = new double[d];
        java.util.Arrays.fill(one, 1.0);
        RefTensor ones = new RefTensor(Shape.of(d), one);
        double eps = a.getDouble("eps", 1e-6);
        RefTensor xhat = a.getString("kind", "rms").equals("rms") ? RefOps.rmsNorm(x, ones, eps) : RefOps.layerNorm(x, ones, null, eps);
        double[] dw = new double[d];
        for (int i = 0; i < xhat.data().length; i++) {
            dw[i % d] += dy.data()[i] * xhat.data()[i];
        }
        return new RefTensor(n.type().shape(), dw);
    }

    static RefTensor attention(Node n, List<RefTensor> in, Attrs a) {
        RefTensor q = in.get(0);
        RefTensor k = in.get(1);
        if (a.getBool("rope", false)) {
            q = RefOps.rope(q, a.getDouble("rope_base", 10000), 0);
            k = RefOps.rope(k, a.getDouble("rope_base", 10000), 0);
        }
        Shape plain = q.shape().withDim(3, in.get(2).shape().dim(3));
        RefTensor o = RefOps.attention(q, k, in.get(2), in.size() > 3 ? in.get(3) : null, a.getDouble("scale", 1), a.getBool("causal", false), plain);
        int[] perm = a.getInts("out_perm");
        return perm == null ? o : RefOps.permute(o, perm, n.type().shape());
    }

    /** Every element of the output from the expression over the (broadcast) inputs. */
    static RefTensor elementwise(Node n, List<RefTensor> in, Attrs a) {
        ElementwiseExpr e = ElementwiseExpr.parse(a.getString("expr", ""));
        Shape out = n.type().shape();
        int count = Math.toIntExact(out.numel());
        long[][] strides = new long[in.size()][];
        for (int i = 0; i < in.size(); i++) {
            strides[i] = RefOps.broadcastStrides(in.get(i).shape(), out);
        }
        int[] dims = out.dims();
        int[] idx = new int[dims.length];
        double[] args = new double[in.size()];
        double[] r = new double[count];
        for (int i = 0; i < count; i++) {
            for (int j = 0; j < args.length; j++) {
                long off = 0;
                for (int d = 0; d < dims.length; d++) {
                    off += idx[d] * strides[j][d];
                }
                args[j] = in.get(j).data()[(int) off];
            }
            r[i] = eval(e, args);
            RefOps.increment(idx, dims);
        }
        return new RefTensor(out, r);
    }

    static double eval(ElementwiseExpr e, double[] args) {
        return switch (e) {
            case ElementwiseExpr.In i -> args[i.index()];
            case ElementwiseExpr.Const c -> c.value();
            case ElementwiseExpr.Call c -> {
                double x = eval(c.args().get(0), args);
                double y = c.args().size() > 1 ? eval(c.args().get(1), args) : 0;
                yield switch (c.fn()) {
                    case "add" -> x + y;
                    case "sub" -> x - y;
                    case "mul" -> x * y;
                    case "div" -> x / y;
                    case "gelu_tanh_grad" -> y * RefMath.geluTanhGrad(x);
                    case "gelu_erf_grad" -> y * RefMath.geluErfGrad(x);
                    case "silu_grad" -> y * RefMath.siluGrad(x);
                    case "relu_grad" -> x > 0 ? y : 0;
                    case "cast_f32", "cast_bf16", "cast_f16" -> RefOps.castValue(x, DType.parse(c.fn().substring(5)));
                    default -> act(c.fn()).applyAsDouble(x);
                };
            }
        };
    }

    static DoubleUnaryOperator act(String fn) {
        return switch (fn) {
            case "none" -> x -> x;
            case "gelu_tanh" -> RefMath::geluTanh;
            case "gelu_erf" -> RefMath::geluErf;
            case "relu" -> x -> Math.max(x, 0.0); // NaN stays NaN, as in PyTorch and the CPU kernels
            case "silu" -> RefMath::silu;
            case "neg" -> x -> -x;
            case "exp" -> Math::exp;
            case "tanh" -> Math::tanh;
            default -> throw new IllegalArgumentException("unknown function " + fn);
        };
    }

    private static RefTensor rounded(RefTensor t, Attrs a) {
        if (!a.has("out")) {
            return t;
        }
        DType d = DType.parse(a.getString("out", "f32"));
        return RefOps.unary(t, x -> RefOps.castValue(x, d));
    }
}
