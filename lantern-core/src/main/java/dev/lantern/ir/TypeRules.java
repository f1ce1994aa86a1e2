package dev.lantern.ir;

import java.util.Arrays;
import java.util.List;

/** Shape and dtype rules shared by several ops' specs. Each throws {@link TypeException} with what it expected. */
final class TypeRules {
    private TypeRules() {}

    static TensorType sameAsFirst(List<TensorType> in, Attrs a) {
        return in.getFirst().contiguous();
    }

    static TensorType floating(List<TensorType> in, Attrs a) {
        requireFloat(in.getFirst(), "input");
        return in.getFirst().contiguous();
    }

    static void requireFloat(TensorType t, String what) {
        if (!t.dtype().isFloating()) {
            throw new TypeException("expected a floating " + what + ", found " + t);
        }
    }

    static void sameDtype(List<TensorType> in) {
        for (TensorType t : in) {
            if (t.dtype() != in.getFirst().dtype()) {
                throw new TypeException("inputs must share a dtype, found " + in.getFirst().dtype() + " and " + t.dtype());
            }
        }
    }

    /** NumPy broadcasting: dimensions align from the right; each pair is equal or one of them is 1. */
    static TensorType broadcast(List<TensorType> in, Attrs a) {
        sameDtype(in);
        Shape x = in.get(0).shape();
        Shape y = in.get(1).shape();
        int rank = Math.max(x.rank(), y.rank());
        int[] out = new int[rank];
        for (int i = 0; i < rank; i++) {
            int dx = i < rank - x.rank() ? 1 : x.dim(i - (rank - x.rank()));
            int dy = i < rank - y.rank() ? 1 : y.dim(i - (rank - y.rank()));
            if (dx != dy && dx != 1 && dy != 1) {
                throw new TypeException("shapes " + x + " and " + y + " do not broadcast (axis " + i + ": " + dx + " vs " + dy + ")");
            }
            out[i] = dx == 1 ? dy : dx;
        }
        return TensorType.of(in.getFirst().dtype(), Shape.of(out));
    }

    /** a: (..., M, K) or (..., K, M) transposed; b: (..., K, N) or (..., N, K) transposed; batch dims broadcast. */
    static TensorType matmul(List<TensorType> in, Attrs attrs) {
        sameDtype(in);
        requireFloat(in.get(0), "matmul operand");
        Shape a = in.get(0).shape();
        Shape b = in.get(1).shape();
        if (a.rank() < 2 || b.rank() < 2) {
            throw new TypeException("matmul needs operands of rank >= 2, found " + a + " and " + b);
        }
        boolean ta = attrs.getBool("transpose_a", false);
        boolean tb = attrs.getBool("transpose_b", false);
        int m = ta ? a.dim(-1) : a.dim(-2);
        int ka = ta ? a.dim(-2) : a.dim(-1);
        int kb = tb ? b.dim(-1) : b.dim(-2);
        int n = tb ? b.dim(-2) : b.dim(-1);
        if (ka != kb) {
            throw new TypeException("matmul inner dimensions differ: " + a + (ta ? "ᵀ" : "") + " x " + b + (tb ? "ᵀ" : "") + " (" + ka + " vs " + kb + ")");
        }
        int[] ab = Arrays.copyOf(a.dims(), a.rank() - 2);
        int[] bb = Arrays.copyOf(b.dims(), b.rank() - 2);
        int rank = Math.max(ab.length, bb.length);
        int[] out = new int[rank + 2];
        for (int i = 0; i < rank; i++) {
            int dx = i < rank - ab.length ? 1 : ab[i - (rank - ab.length)];
            int dy = i < rank - bb.length ? 1 : bb[i - (rank - bb.length)];
            if (dx != dy && dx != 1 && dy != 1) {
                throw new TypeException("matmul batch dimensions do not broadcast: " + a + " and " + b);
            }
            out[i] = dx == 1 ? dy : dx;
        }
        out[rank] = m;
        out[rank + 1] = n;
        return TensorType.of(in.getFirst().dtype(), Shape.of(out));
    }

    static TensorType softmax(List<TensorType> in, Attrs a) {
        requireFinite(a, "scale", Double.NEGATIVE_INFINITY);
        TensorType x = floating(in, a);
        requireRows(x, "softmax");
        if (a.getBool("causal", false) && x.shape().rank() < 2) {
            throw new TypeException("causal softmax needs rank >= 2 (query, key), found " + x);
        }
        return x;
    }

    /**
     * A float attribute that must be a finite number of at least {@code min}: a negative or NaN
     * {@code eps} makes every row NaN, an infinite {@code scale} NaN after the max subtraction.
     */
    static void requireFinite(Attrs a, String key, double min) {
        if (!a.has(key)) {
            return;
        }
        double v = a.getDouble(key, 0);
        if (!Double.isFinite(v) || v < min) {
            throw new TypeException("attribute '" + key + "' must be a finite number" + (min > Double.NEGATIVE_INFINITY ? " >= " + min : "") + ", found " + v);
        }
    }

    /** Row-wise ops work along the last axis: a scalar has none (found by the graph fuzzer: softmax of f32[]). */
    static void requireRows(TensorType x, String what) {
        if (x.shape().rank() == 0) {
            throw new TypeException(what + " works along the last axis and needs rank >= 1, found " + x);
        }
    }

    /** x (..., D); weight (D); bias (D) when present. */
    static TensorType norm(List<TensorType> in, Attrs a) {
        requireFinite(a, "eps", 0);
        TensorType x = floating(in, a);
        requireRows(x, "a norm");
        int d = x.shape().last();
        for (int i = 1; i < in.size(); i++) {
            Shape p = in.get(i).shape();
            if (p.rank() != 1 || p.dim(0) != d) {
                throw new TypeException("norm parameter " + i + " must have shape [" + d + "], found " + p);
            }
            requireFloat(in.get(i), "norm parameter");
        }
        return x;
    }

    /** x (batch, heads, seq, head_dim) with head_dim even. */
    static TensorType rope(List<TensorType> in, Attrs a) {
        requireFinite(a, "base", Double.MIN_VALUE);
        TensorType x = floating(in, a);
        if (x.shape().rank() != 4 || x.shape().last() % 2 != 0) {
            throw new TypeException("rope expects (batch, heads, seq, head_dim) with an even head_dim, found " + x);
        }
        return x;
    }

    static TensorType cast(List<TensorType> in, Attrs a) {
        String to = a.getString("to", "");
        DType d = DType.parse(to);
        if (d == null) {
            throw new TypeException("cast to unknown dtype \"" + to + "\"");
        }
        return TensorType.of(d, in.getFirst().shape());
    }

    static TensorType reshape(List<TensorType> in, Attrs a) {
        int[] dims = a.getInts("shape");
        Shape x = in.getFirst().shape();
        for (int d : dims) {
            if (d < 0) {
                throw new TypeException("reshape dimensions must be >= 0, found " + Arrays.toString(dims));
            }
        }
        Shape s = Shape.of(dims);
        if (s.numel() != x.numel()) {
            throw new TypeException("reshape from " + x + " to " + s + " changes the element count (" + x.numel() + " vs " + s.numel() + ")");
        }
        return TensorType.of(in.getFirst().dtype(), s);
    }

    static TensorType permute(List<TensorType> in, Attrs a) {
        int[] perm = a.getInts("perm");
        Shape x = in.getFirst().shape();
        if (perm.length != x.rank()) {
            throw new TypeException("perm " + Arrays.toString(perm) + " has " + perm.length + " entries for rank " + x.rank());
        }
        boolean[] seen = new boolean[perm.length];
        int[] out = new int[perm.length];
        for (int i = 0; i < perm.length; i++) {
            if (perm[i] < 0 || perm[i] >= perm.length || seen[perm[i]]) {
                throw new TypeException("perm " + Arrays.toString(perm) + " is not a permutation of 0.." + (perm.length - 1));
            }
            seen[perm[i]] = true;
            out[i] = x.dim(perm[i]);
        }
        return TensorType.of(in.getFirst().dtype(), Shape.of(out));
    }

    static TensorType transpose(List<TensorType> in, Attrs a) {
        Shape x = in.getFirst().shape();
        int d0 = axis(a.getInt("dim0", 0), x.rank());
        int d1 = axis(a.getInt("dim1", 0), x.rank());
        int[] out = x.dims();
        out[d0] = x.dim(d1);
        out[d1] = x.dim(d0);
        return TensorType.of(in.getFirst().dtype(), Shape.of(out));
    }

    static TensorType slice(List<TensorType> in, Attrs a) {
        Shape x = in.getFirst().shape();
        int ax = axis(a.getInt("axis", 0), x.rank());
        int start = a.getInt("start", 0);
        int end = a.getInt("end", 0);
        if (start < 0 || end > x.dim(ax) || start >= end) {
            throw new TypeException("slice [" + start + ", " + end + ") is empty or outside axis " + ax + " of " + x);
        }
        return TensorType.of(in.getFirst().dtype(), x.withDim(ax, end - start));
    }

    static TensorType concat(List<TensorType> in, Attrs a) {
        sameDtype(in);
        Shape x = in.getFirst().shape();
        int ax = axis(a.getInt("axis", 0), x.rank());
        long total = 0;
        for (TensorType t : in) {
            Shape s = t.shape();
            if (s.rank() != x.rank()) {
                throw new TypeException("concat inputs differ in rank: " + x + " and " + s);
            }
            for (int i = 0; i < s.rank(); i++) {
                if (i != ax && s.dim(i) != x.dim(i)) {
                    throw new TypeException("concat inputs differ off axis " + ax + ": " + x + " and " + s);
                }
            }
            total += s.dim(ax);
        }
        if (total > Integer.MAX_VALUE) {
            throw new TypeException("concat along axis " + ax + " gives " + total + ", past the dimension limit " + Integer.MAX_VALUE);
        }
        return TensorType.of(in.getFirst().dtype(), x.withDim(ax, (int) total));
    }

    /** table (..., n, ...) of any dtype, ids i32/i64 of any shape -> table[:axis] ++ ids ++ table[axis+1:]. */
    static TensorType gather(List<TensorType> in, Attrs a) {
        if (in.size() != 2) {
            throw new TypeException("gather takes a table and ids, found " + in.size() + " inputs");
        }
        Shape table = in.get(0).shape();
        TensorType ids = in.get(1);
        if (ids.dtype() != DType.I32 && ids.dtype() != DType.I64) {
            throw new TypeException("gather ids must be i32 or i64, found " + ids);
        }
        if (table.rank() == 0) {
            throw new TypeException("gather needs a table of rank >= 1, found " + in.get(0));
        }
        int ax = axis(a.getInt("axis", 0), table.rank());
        int[] out = new int[table.rank() - 1 + ids.shape().rank()];
        int o = 0;
        for (int i = 0; i < table.rank(); i++) {
            if (i == ax) {
                for (int d : ids.shape().dims()) {
                    out[o++] = d;
                }
            } else {
                out[o++] = table.dim(i);
            }
        }
        return TensorType.of(in.getFirst().dtype(), Shape.of(out));
    }

    /**
     * q (b, h, s, d), k (b, hk, t, d), v (b, hk, t, e) -> (b, h, s, e), or that permuted by {@code out_perm};
     * hk divides h (grouped-query attention: query head i reads K/V head i / (h / hk)).
     */
    static TensorType attention(List<TensorType> in, Attrs a) {
        requireFinite(a, "scale", Double.NEGATIVE_INFINITY);
        requireFinite(a, "rope_base", Double.MIN_VALUE);
        TensorType t = attentionPlain(in, a);
        if (a.getBool("rope", false) && in.get(0).shape().dim(3) % 2 != 0) {
            throw new TypeException("attention with rope needs an even head_dim, found " + in.get(0));
        }
        if (a.has("out_perm")) {
            return permute(List.of(t), Attrs.of("perm", a.getInts("out_perm")));
        }
        return t;
    }

    /** a (..., M, K), b (K, N) or as matmul; bias (N); residuals of the result's shape. */
    static TensorType gemm(List<TensorType> in, Attrs a) {
        TensorType mm = matmul(in.subList(0, 2), a);
        boolean bias = a.getBool("bias", false);
        int n = mm.shape().last();
        int extra = in.size() - 2 - (bias ? 1 : 0);
        if (extra < 0 || extra > 2) {
            throw new TypeException("gemm takes a, b" + (bias ? ", bias" : "") + " and 0-2 residuals, found " + in.size() + " inputs");
        }
        if (bias && (in.get(2).shape().rank() != 1 || in.get(2).shape().dim(0) != n)) {
            throw new TypeException("gemm bias must have shape [" + n + "], found " + in.get(2));
        }
        for (int i = in.size() - extra; i < in.size(); i++) {
            if (!in.get(i).shape().equals(mm.shape())) {
                throw new TypeException("gemm residual must have the result's shape " + mm.shape() + ", found " + in.get(i));
            }
        }
        String act = a.getString("act", "none");
        if (!act.equals("none") && !act.equals("gelu_tanh") && !act.equals("gelu_erf") && !act.equals("relu") && !act.equals("silu")) {
            throw new TypeException("gemm act must be none, gelu_tanh, gelu_erf, relu or silu, found \"" + act + "\"");
        }
        return outDtype(mm, a);
    }

    /** x (..., D) [+ residual of x's shape]; weight (D); for kind="layer" a bias (D) when layer_norm had one. */
    static TensorType fusedNorm(List<TensorType> in, Attrs a) {
        String kind = a.getString("kind", "");
        boolean res = a.getBool("residual", false);
        int want = 2 + (res ? 1 : 0);
        if (!kind.equals("rms") && !kind.equals("layer")) {
            throw new TypeException("fused_norm kind must be \"rms\" or \"layer\", found \"" + kind + "\"");
        }
        if (in.size() != want && !(kind.equals("layer") && in.size() == want + 1)) {
            throw new TypeException("fused_norm {kind=\"" + kind + "\", residual=" + res + "} takes " + want
                    + (kind.equals("layer") ? " or " + (want + 1) + " (with a bias)" : "") + " inputs, found " + in.size());
        }
        TensorType x = in.getFirst();
        requireFloat(x, "input");
        if (res && !in.get(1).shape().equals(x.shape())) {
            throw new TypeException("fused_norm residual must have x's shape " + x.shape() + ", found " + in.get(1));
        }
        norm(concatLists(x, in.subList(res ? 2 : 1, in.size())), a);
        return outDtype(x.contiguous(), a);
    }

    /** Broadcast of every input; the dtype that the expression yields. */
    static TensorType elementwise(List<TensorType> in, Attrs a) {
        ElementwiseExpr e = ElementwiseExpr.parse(a.getString("expr", ""));
        if (e.maxInput() >= in.size()) {
            throw new TypeException("expression reads $" + e.maxInput() + " but the op has " + in.size() + " inputs");
        }
        TensorType acc = in.getFirst().contiguous();
        for (int i = 1; i < in.size(); i++) {
            TensorType next = in.get(i).withDtype(acc.dtype());
            acc = broadcast(List.of(acc, next), a);
        }
        DType d = e.dtype(in.stream().map(TensorType::dtype).toList());
        return TensorType.of(d == null ? in.getFirst().dtype() : d, acc.shape());
    }

    private static List<TensorType> concatLists(TensorType first, List<TensorType> rest) {
        List<TensorType> l = new java.util.ArrayList<>();
        l.add(first);
        l.addAll(rest);
        return l;
    }

    private static TensorType outDtype(TensorType t, Attrs a) {
        if (!a.has("out")) {
            return t;
        }
        DType d = DType.parse(a.getString("out", ""));
        if (d == null || !d.isFloating()) {
            throw new TypeException("out must name a floating dtype, found \"" + a.getString("out", "") + "\"");
        }
        return TensorType.of(d, t.shape());
    }

    static TensorType attentionPlain(List<TensorType> in, Attrs a) {
        sameDtype(in);
        Shape q = in.get(0).shape();
        Shape k = in.get(1).shape();
        Shape v = in.get(2).shape();
        if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4 || q.dim(3) != k.dim(3) || k.dim(2) != v.dim(2)
                || q.dim(0) != k.dim(0) || v.dim(0) != k.dim(0) || v.dim(1) != k.dim(1)) {
            throw new TypeException("attention expects q (b,h,s,d), k (b,hk,t,d), v (b,hk,t,e), found " + q + ", " + k + ", " + v);
        }
        if (k.dim(1) == 0 ? q.dim(1) != 0 : q.dim(1) % k.dim(1) != 0) {
            // grouped-query attention: query head i reads K/V head i / (h / hk), so the groups must be whole
            throw new TypeException("attention needs the query heads h a multiple of the K/V heads hk (h % hk == 0), found h="
                    + q.dim(1) + ", hk=" + k.dim(1) + " in " + q + ", " + k + ", " + v);
        }
        if (in.size() == 4) {
            Shape m = in.get(3).shape();
            int[] full = {q.dim(0), q.dim(1), q.dim(2), k.dim(2)};
            boolean ok = m.rank() == 4;
            for (int i = 0; ok && i < 4; i++) {
                ok = m.dim(i) == 1 || m.dim(i) == full[i];
            }
            if (!ok) {
                throw new TypeException("attention's mask must be rank 4 and broadcast to the scores (b,h,s,t) = "
                        + Shape.of(full) + ", found " + m);
            }
        }
        return TensorType.of(in.getFirst().dtype(), q.withDim(3, v.dim(3)));
    }

    /** An axis in [-rank, rank) made non-negative. */
    static int axis(int axis, int rank) {
        int ax = axis < 0 ? axis + rank : axis;
        if (ax < 0 || ax >= rank) {
            throw new TypeException("axis " + axis + " is out of range for rank " + rank);
        }
        return ax;
    }
}
