package dev.lantern.ir;

import java.util.Arrays;
import java.util.List;

/**
 * Shape and dtype rules of the ops that autodiff adds: the gradient helpers, reduce_sum, the loss and
 * scatter_add. Each throws {@link TypeException} with what it expected, as {@link TypeRules}' do.
 */
final class GradTypeRules {
    private GradTypeRules() {}

    /** (x, dy) of a gradient helper: floating, broadcast as a binary op. */
    static TensorType elementwiseGrad(List<TensorType> in, Attrs a) {
        TypeRules.requireFloat(in.get(0), "input");
        return TypeRules.broadcast(in, a);
    }

    /** (y, dy) of softmax_grad: both floating, of one shape, rank >= 1. */
    static TensorType rowGrad(List<TensorType> in, Attrs a) {
        TypeRules.requireFinite(a, "scale", Double.NEGATIVE_INFINITY);
        TypeRules.sameDtype(in);
        TensorType y = TypeRules.floating(in, a);
        TypeRules.requireRows(y, "softmax_grad");
        if (!in.get(1).shape().equals(y.shape())) {
            throw new TypeException("softmax_grad needs y and dy of one shape, found " + in.get(0) + " and " + in.get(1));
        }
        return y;
    }

    /**
     * (x, w, dy[, r]) of a norm's gradient: x (..., D) floating, w (D), dy of x's shape and dtype;
     * r, of the same, exactly when {@code residual=true}.
     */
    static TensorType normGrad(List<TensorType> in, Attrs a) {
        TensorType x = TypeRules.norm(in.subList(0, 2), a);
        if (!in.get(2).shape().equals(x.shape()) || in.get(2).dtype() != x.dtype()) {
            throw new TypeException("a norm gradient needs dy of x's type " + x + ", found " + in.get(2));
        }
        boolean res = a.getBool("residual", false);
        if (res != (in.size() == 4)) {
            throw new TypeException("a norm gradient {residual=" + res + "} takes " + (res ? 4 : 3) + " inputs (x, w, dy"
                    + (res ? ", r" : "") + "), found " + in.size());
        }
        if (res && (!in.get(3).shape().equals(x.shape()) || in.get(3).dtype() != x.dtype())) {
            throw new TypeException("a norm gradient's residual r must have x's type " + x + ", found " + in.get(3));
        }
        return x;
    }

    /** (x, dy) of norm_weight_grad: floating, one shape (..., D); the result is [D] in dy's dtype. */
    static TensorType normWeightGrad(List<TensorType> in, Attrs a) {
        TypeRules.requireFinite(a, "eps", 0);
        String kind = a.getString("kind", "");
        if (!kind.equals("rms") && !kind.equals("layer")) {
            throw new TypeException("norm_weight_grad kind must be \"rms\" or \"layer\", found \"" + kind + "\"");
        }
        TensorType x = in.get(0);
        TensorType dy = in.get(1);
        TypeRules.requireFloat(x, "input");
        TypeRules.requireFloat(dy, "gradient");
        TypeRules.requireRows(x, "norm_weight_grad");
        if (!dy.shape().equals(x.shape())) {
            throw new TypeException("norm_weight_grad needs dy of x's shape " + x.shape() + ", found " + dy);
        }
        return TensorType.of(dy.dtype(), Shape.of(x.shape().last()));
    }

    /** x reduced over {@code axes}: each a distinct axis in [-rank, rank); kept as size 1 with keepdims. */
    static TensorType reduceSum(List<TensorType> in, Attrs a) {
        TensorType x = TypeRules.floating(in, a);
        int[] axes = a.getInts("axes");
        Shape s = x.shape();
        boolean[] reduced = new boolean[s.rank()];
        for (int ax : axes == null ? new int[0] : axes) {
            int i = TypeRules.axis(ax, s.rank());
            if (reduced[i]) {
                throw new TypeException("reduce_sum axes " + Arrays.toString(axes) + " name axis " + i + " twice");
            }
            reduced[i] = true;
        }
        boolean keep = a.getBool("keepdims", false);
        int[] out = new int[keep ? s.rank() : s.rank() - (axes == null ? 0 : axes.length)];
        for (int i = 0, o = 0; i < s.rank(); i++) {
            if (!reduced[i]) {
                out[o++] = s.dim(i);
            } else if (keep) {
                out[o++] = 1;
            }
        }
        return TensorType.of(x.dtype(), Shape.of(out));
    }

    /** logits (..., V) floating with V >= 1, targets (...) i32/i64 -> a scalar of the logits' dtype. */
    static TensorType crossEntropy(List<TensorType> in, Attrs a) {
        return TensorType.of(lossOperands(in, "cross_entropy").dtype(), Shape.scalar());
    }

    /** (logits, targets, dloss) -> the logits' type; dloss is a scalar of the logits' dtype. */
    static TensorType crossEntropyGrad(List<TensorType> in, Attrs a) {
        TensorType logits = lossOperands(in.subList(0, 2), "cross_entropy_grad");
        if (in.get(2).shape().numel() != 1 || in.get(2).dtype() != logits.dtype()) {
            throw new TypeException("cross_entropy_grad's dloss must be one " + logits.dtype() + " element, found " + in.get(2));
        }
        return logits.contiguous();
    }

    private static TensorType lossOperands(List<TensorType> in, String what) {
        TensorType logits = in.get(0);
        TensorType targets = in.get(1);
        TypeRules.requireFloat(logits, "logits");
        Shape l = logits.shape();
        if (l.rank() == 0 || l.last() == 0) {
            throw new TypeException(what + " needs logits (..., V) with V >= 1, found " + logits);
        }
        if (targets.dtype() != DType.I32 && targets.dtype() != DType.I64) {
            throw new TypeException(what + " targets must be i32 or i64, found " + targets);
        }
        if (!Shape.of(Arrays.copyOf(l.dims(), l.rank() - 1)).equals(targets.shape())) {
            throw new TypeException(what + " needs targets of the logits' shape without the last axis, found logits "
                    + logits + " and targets " + targets);
        }
        return logits;
    }

    /** updates (table[:axis] ++ ids ++ table[axis+1:]), ids i32/i64 -> table[:axis] ++ [size] ++ table[axis+1:]. */
    static TensorType scatterAdd(List<TensorType> in, Attrs a) {
        TensorType upd = in.get(0);
        TensorType ids = in.get(1);
        if (ids.dtype() != DType.I32 && ids.dtype() != DType.I64) {
            throw new TypeException("scatter_add ids must be i32 or i64, found " + ids);
        }
        int size = a.getInt("size", -1);
        if (size < 0) {
            throw new TypeException("scatter_add needs a size >= 0, found " + size);
        }
        int rank = upd.shape().rank() - ids.shape().rank() + 1;
        if (rank < 1) {
            throw new TypeException("scatter_add updates " + upd + " have fewer axes than the ids " + ids);
        }
        int ax = TypeRules.axis(a.getInt("axis", 0), rank);
        int[] u = upd.shape().dims();
        int[] idd = ids.shape().dims();
        if (!Arrays.equals(Arrays.copyOfRange(u, ax, ax + idd.length), idd)) {
            throw new TypeException("scatter_add updates " + upd + " must hold the ids' shape " + ids.shape() + " at axis " + ax);
        }
        int[] out = new int[rank];
        for (int i = 0; i < rank; i++) {
            out[i] = i < ax ? u[i] : i == ax ? size : u[i - 1 + idd.length];
        }
        return TensorType.of(upd.dtype(), Shape.of(out));
    }
    /** (q, k [, mask]) of attention_lse, checked as attention's (q, k, k [, mask]) -> f32[b, h, s]. */
    static TensorType attentionLse(List<TensorType> in, Attrs a) {
        TypeRules.requireFinite(a, "scale", Double.NEGATIVE_INFINITY);
        List<TensorType> as = new java.util.ArrayList<>(List.of(in.get(0), in.get(1), in.get(1)));
        as.addAll(in.subList(2, in.size()));
        TypeRules.requireFloat(in.get(0), "q");
        Shape q = TypeRules.attentionPlain(as, a).shape();
        return TensorType.of(DType.F32, Shape.of(q.dim(0), q.dim(1), q.dim(2)));
    }

    /** (q, k, v, o, dy, lse [, mask]) of attention_grad_q -> q's shape and dtype, contiguous. */
    static TensorType attentionGradQ(List<TensorType> in, Attrs a) {
        attentionGradOperands(in, a, "attention_grad_q");
        return in.get(0).contiguous();
    }

    /** (q, k, v, o, dy, lse [, mask]) of attention_grad_kv -> k's dtype, [2, b, hk, t, d] (dk then dv; e == d). */
    static TensorType attentionGradKv(List<TensorType> in, Attrs a) {
        attentionGradOperands(in, a, "attention_grad_kv");
        Shape k = in.get(1).shape();
        if (in.get(2).shape().dim(3) != k.dim(3)) {
            throw new TypeException("attention_grad_kv packs dk and dv in one tensor: it needs v's head dim equal to k's, found "
                    + in.get(1) + " and " + in.get(2));
        }
        return TensorType.of(in.get(1).dtype(), Shape.of(2, k.dim(0), k.dim(1), k.dim(2), k.dim(3)));
    }

    private static void attentionGradOperands(List<TensorType> in, Attrs a, String what) {
        TypeRules.requireFinite(a, "scale", Double.NEGATIVE_INFINITY);
        TypeRules.requireFloat(in.get(0), "q");
        List<TensorType> as = new java.util.ArrayList<>(in.subList(0, 3));
        as.addAll(in.subList(6, in.size()));
        TensorType o = TypeRules.attentionPlain(as, a);
        for (int i = 3; i < 5; i++) {
            if (!in.get(i).shape().equals(o.shape()) || in.get(i).dtype() != o.dtype()) {
                throw new TypeException(what + " needs " + (i == 3 ? "o" : "dy") + " of the attention's type " + o + ", found " + in.get(i));
            }
        }
        Shape s = o.shape();
        TensorType lse = in.get(5);
        if (lse.dtype() != DType.F32 || !lse.shape().equals(Shape.of(s.dim(0), s.dim(1), s.dim(2)))) {
            throw new TypeException(what + " needs lse f32[" + s.dim(0) + "," + s.dim(1) + "," + s.dim(2) + "], found " + lse);
        }
    }
}
