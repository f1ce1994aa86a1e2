package dev.lantern.passes;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.passes.Rule.Rewrite;

import java.util.List;

/**
 * fuse-norm's rule for a norm's weight gradient. The norm VJP writes it as a composition
 * (autodiff keeps primitive ops, and the unfused step is the baseline the fused one is measured
 * against):
 * <pre>
 *   %h = rms_norm(%x, %ones) {eps}                   x̂, as large as x (f32 on the residual stream)
 *   %p = mul(%dy, %h)                                as large again
 *   %s = reduce_sum(%p) {axes=[0, .., rank-2], keepdims=true}
 *   %w = reshape(%s) {shape=[D]}                     (the VJP's sumTo)
 *   -> %w = norm_weight_grad(%x, %dy) {eps, kind="rms"} : [D]
 * </pre>
 * A reduce_sum read otherwise becomes norm_weight_grad itself (keepdims=false) or a free reshape of it;
 * layer_norm alike (kind="layer"), and a fused_norm that fuse-norm has already made of the x̂ norm
 * (a widening cast folded in, an out dtype) as long as it has no residual prologue. It fires only
 * when x̂ and the product are read by nothing else, and the weight is the constant 1 (x̂, not y).
 * The fused op reads x and dy once and writes D values; the composition writes and re-reads two
 * tensors as large as x (three kernels on CUDA).
 */
final class NormWeightGradRule {
    private NormWeightGradRule() {}

    static final Rule RULE = Rule.of("norm-weight-grad", NormWeightGradRule::apply);

    private static Rewrite apply(Node n, RewriteContext cx) {
        Node sum = n;
        if (n.op() == Op.RESHAPE) {
            // the VJP's sumTo: reduce_sum {keepdims=true} then reshape to [D]; replace both
            sum = cx.in(n, 0, Op.REDUCE_SUM);
            if (sum == null || !cx.onlyUsedBy(sum.name(), n) || n.type().shape().rank() != 1) {
                return null;
            }
        } else if (n.op() != Op.REDUCE_SUM || isSumTo(n, cx)) {
            return null; // (a sumTo's reshape takes it, above)
        }
        Node m = cx.in(sum, 0, Op.MUL);
        if (m == null || !cx.onlyUsedBy(m.name(), sum)) {
            return null;
        }
        Shape s = m.type().shape();
        if (s.rank() < 1 || !overLeadingAxes(sum, s.rank())) {
            return null;
        }
        for (int side = 0; side < 2; side++) {
            Node h = cx.in(m, side);
            String dy = m.input(1 - side);
            Attrs a = h == null ? null : xhatAttrs(h, cx);
            if (a == null || !cx.onlyUsedBy(h.name(), m) || !cx.type(dy).shape().equals(s) || !cx.type(h.input(0)).shape().equals(s)) {
                continue;
            }
            String x = h.input(0);
            Node widened = cx.in(h, 0, Op.CAST);
            if (widened != null && cx.onlyUsedBy(x, h) && cx.type(widened.input(0)).dtype().isFloating()
                    && cx.type(widened.input(0)).dtype().bytes() < cx.type(x).dtype().bytes()) {
                x = widened.input(0); // a widening cast is exact, and the op reads any float storage in f32
            }
            Node grad = Build.fresh(cx, Op.NORM_WEIGHT_GRAD, a, List.of(x, dy));
            if (grad.type().dtype() != n.type().dtype()) {
                return null; // the sum's dtype is the product's, which is dy's: never differs
            }
            if (grad.type().shape().equals(n.type().shape())) {
                return Rewrite.to(new Node(n.name(), grad.op(), grad.inputs(), grad.attrs(), grad.type()));
            }
            Attrs keep = Attrs.of("shape", n.type().shape().dims()); // keepdims: [1, .., 1, D], a free view
            return Rewrite.to(grad, new Node(n.name(), Op.RESHAPE, List.of(grad.name()), keep, Op.RESHAPE.infer(List.of(grad.type()), keep)));
        }
        return null;
    }

    /** Whether the reduce_sum {@code n} is read only by a reshape to rank 1. */
    private static boolean isSumTo(Node n, RewriteContext cx) {
        List<Node> users = cx.users(n.name());
        return users.size() == 1 && cx.onlyUsedBy(n.name(), users.getFirst()) && users.getFirst().op() == Op.RESHAPE
                && users.getFirst().type().shape().rank() == 1;
    }

    /** Whether {@code n} sums every axis but the last of a rank-{@code rank} value (the rows). */
    private static boolean overLeadingAxes(Node n, int rank) {
        int[] axes = n.attrs().getInts("axes");
        if (axes == null || axes.length != rank - 1) {
            return false;
        }
        boolean[] seen = new boolean[rank];
        for (int ax : axes) {
            int a = ax < 0 ? ax + rank : ax;
            if (a < 0 || a >= rank - 1 || seen[a]) {
                return false;
            }
            seen[a] = true;
        }
        return true;
    }

    /** The norm_weight_grad attributes when {@code h} is x̂ (a norm of x with a weight of constant ones), else null. */
    private static Attrs xhatAttrs(Node h, RewriteContext cx) {
        Attrs a;
        int w;
        if (h.op() == Op.RMS_NORM || h.op() == Op.LAYER_NORM) {
            boolean rms = h.op() == Op.RMS_NORM;
            a = Attrs.of("eps", h.attrs().getDouble("eps", rms ? 1e-6 : 1e-5), "kind", rms ? "rms" : "layer");
            w = 1;
        } else if (h.op() == Op.FUSED_NORM && !h.attrs().getBool("residual", false)) {
            a = Attrs.of("eps", h.attrs().getDouble("eps", 0), "kind", h.attrs().getString("kind", "rms"));
            w = 1;
        } else {
            return null;
        }
        if (h.inputs().size() != w + 1) {
            return null; // a bias: not x̂
        }
        Node ones = cx.in(h, w);
        boolean unit = ones != null && ones.op() == Op.CONSTANT && ones.attrs().getDouble("value", Double.NaN) == 1.0;
        return unit ? a : null;
    }
}
