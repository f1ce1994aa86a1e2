package dev.lantern.cuda.lower;

import static dev.lantern.cuda.lower.LoweringContext.ptr;

import dev.lantern.cuda.codegen.CodegenException;
import dev.lantern.cuda.codegen.CrossEntropySpec;
import dev.lantern.cuda.codegen.NormBackwardSpec;
import dev.lantern.cuda.codegen.ReduceSpec;
import dev.lantern.cuda.codegen.RowGradSpec;
import dev.lantern.cuda.codegen.ScatterAddSortedSpec;
import dev.lantern.cuda.codegen.ScatterAddSpec;
import dev.lantern.ir.DType;
import dev.lantern.ir.Node;
import dev.lantern.ir.Shape;
import dev.lantern.kernel.Kernel;
import java.util.ArrayList;
import java.util.List;

/**
 * The ops autodiff adds that are not elementwise: softmax_grad, rms_norm_grad, layer_norm_grad
 * (one row kernel), cross_entropy (per-token losses into a transient buffer, then their mean),
 * cross_entropy_grad (one row kernel), reduce_sum (a direct or split two-stage reduction) and
 * scatter_add (one CTA per output row). None uses atomics; each one's order of summation is fixed by
 * the shapes, so strict mode runs them all. Row kernels read their operands contiguous (a strided
 * operand is copied first); reduce_sum reads any strides in place.
 */
final class GradientLowerer implements KernelLowerer {
    @Override
    public void lower(Kernel k, LoweringContext cx) {
        switch (k.node().op()) {
            case SOFTMAX_GRAD, RMS_NORM_GRAD, LAYER_NORM_GRAD -> rowGrad(k, cx);
            case CROSS_ENTROPY -> crossEntropy(k, cx);
            case CROSS_ENTROPY_GRAD -> crossEntropyGrad(k, cx);
            case REDUCE_SUM -> reduceSum(k, cx);
            case SCATTER_ADD -> scatterAdd(k, cx);
            default -> throw new CodegenException("not a gradient op: " + k.node().op().text());
        }
    }

    private static void rowGrad(Kernel k, LoweringContext cx) {
        Node n = k.node();
        View o = cx.out(k);
        Shape s = o.shape();
        long rows = s.numel() / s.last();
        List<Step.Arg> a = new ArrayList<>();
        RowGradSpec spec;
        switch (n.op()) {
            case SOFTMAX_GRAD -> {
                View y = cx.contiguous(cx.in(k, 0));
                View dy = cx.contiguous(cx.in(k, 1));
                spec = new RowGradSpec("lt_softmax_grad", RowGradSpec.Kind.SOFTMAX, rows, s.last(), n.attrs().getDouble("scale", 1.0),
                        y.dtype(), y.dtype(), o.dtype());
                a.add(ptr(y));
                a.add(ptr(dy));
            }
            default -> {
                boolean layer = n.op() == dev.lantern.ir.Op.LAYER_NORM_GRAD;
                View x = cx.contiguous(cx.in(k, 0));
                View w = cx.contiguous(cx.in(k, 1));
                View dy = cx.contiguous(cx.in(k, 2));
                boolean res = n.attrs().getBool("residual", false);
                double eps = n.attrs().getDouble("eps", layer ? 1e-5 : 1e-6);
                Kernel dw = cx.deferredWeightGrads.remove(k.name());
                if (dw != null) {
                    normBackward(k, dw, cx, x, w, dy, eps, res);
                    return;
                }
                spec = new RowGradSpec("lt_norm_grad", layer ? RowGradSpec.Kind.LAYER_NORM : RowGradSpec.Kind.RMS_NORM, rows, s.last(),
                        eps, x.dtype(), w.dtype(), o.dtype(), res);
                a.add(ptr(x));
                a.add(ptr(w));
                a.add(ptr(dy));
                if (res) {
                    // the residual form (fuse-norm): r read once, where dx is stored; of out's dtype by the type rule
                    View r = cx.contiguous(cx.in(k, 3));
                    if (r.dtype() != o.dtype()) {
                        throw new CodegenException(n + ": the residual r is " + r.dtype() + ", dx " + o.dtype());
                    }
                    a.add(ptr(r));
                }
            }
        }
        a.add(ptr(o));
        a.add(new Step.I64(rows));
        cx.launch(spec, a);
    }

    /**
     * dx and the weight gradient's partials in one read of x and dy ({@link NormBackwardSpec}), then
     * the deferred norm_weight_grad kernel {@code dw}'s FINISH stage sums the partials into dw.
     */
    private static void normBackward(Kernel k, Kernel dw, LoweringContext cx, View x, View w, View dy, double eps, boolean res) {
        View o = cx.out(k);
        long rows = o.shape().numel() / o.shape().last();
        NormBackwardSpec spec = new NormBackwardSpec("lt_norm_bwd", NormWeightGradLowerer.kind(dw), rows, o.shape().last(), eps,
                x.dtype(), w.dtype(), dy.dtype(), o.dtype(), res);
        long bytes = spec.partials().workspaceBytes();
        Buf ws = cx.transientBuf(bytes);
        List<Step.Arg> a = new ArrayList<>(List.of(ptr(x), ptr(w), ptr(dy)));
        if (res) {
            View r = cx.contiguous(cx.in(k, 3));
            if (r.dtype() != o.dtype()) {
                throw new CodegenException(k.node() + ": the residual r is " + r.dtype() + ", dx " + o.dtype());
            }
            a.add(ptr(r));
        }
        a.add(ptr(o));
        a.add(new Step.Ptr(ws, bytes));
        a.add(new Step.I64(rows));
        cx.launch(spec, a);
        NormWeightGradLowerer.finish(dw, ws, cx);
    }

    private static View targets(Kernel k, LoweringContext cx) {
        View t = cx.contiguous(cx.in(k, 1));
        if (t.dtype() != DType.I32 && t.dtype() != DType.I64) {
            throw new CodegenException("cross_entropy targets must be i32 or i64, found " + t.dtype());
        }
        return t;
    }

    private static void crossEntropy(Kernel k, LoweringContext cx) {
        View x = cx.contiguous(cx.in(k, 0));
        View t = targets(k, cx);
        View o = cx.out(k);
        long v = x.shape().last();
        long rows = x.shape().numel() / v;
        long ignore = k.node().attrs().getLong("ignore_index", -100);
        Buf tok = cx.transientBuf(rows * 4);
        cx.launch(new CrossEntropySpec("lt_xent_tokens", CrossEntropySpec.Stage.TOKENS, rows, v, ignore, x.dtype(), t.dtype(), o.dtype()),
                List.of(ptr(x), ptr(t), new Step.Ptr(tok, rows * 4), new Step.I64(rows)));
        cx.launch(new CrossEntropySpec("lt_xent_mean", CrossEntropySpec.Stage.MEAN, rows, v, ignore, x.dtype(), t.dtype(), o.dtype()),
                List.of(ptr(t), new Step.Ptr(tok, rows * 4), ptr(o), new Step.I64(rows)));
    }

    private static void crossEntropyGrad(Kernel k, LoweringContext cx) {
        View x = cx.contiguous(cx.in(k, 0));
        View t = targets(k, cx);
        View dloss = cx.contiguous(cx.in(k, 2));
        View o = cx.out(k);
        long v = x.shape().last();
        long rows = x.shape().numel() / v;
        if (dloss.dtype() != x.dtype()) {
            throw new CodegenException("cross_entropy_grad's dloss " + dloss.dtype() + " and logits " + x.dtype() + " differ");
        }
        long ignore = k.node().attrs().getLong("ignore_index", -100);
        cx.launch(new CrossEntropySpec("lt_xent_grad", CrossEntropySpec.Stage.GRAD, rows, v, ignore, x.dtype(), t.dtype(), o.dtype()),
                List.of(ptr(x), ptr(t), ptr(dloss), ptr(o), new Step.I64(rows)));
    }

    private static void reduceSum(Kernel k, LoweringContext cx) {
        View x = cx.in(k, 0);
        View o = cx.out(k);
        Shape s = x.shape();
        boolean[] reduced = new boolean[s.rank()];
        int[] axes = k.node().attrs().getInts("axes");
        for (int ax : axes == null ? new int[0] : axes) {
            reduced[ax < 0 ? ax + s.rank() : ax] = true;
        }
        List<Long> kd = new ArrayList<>();
        List<Long> ks = new ArrayList<>();
        List<Long> rd = new ArrayList<>();
        List<Long> rs = new ArrayList<>();
        for (int a = 0; a < s.rank(); a++) {
            (reduced[a] ? rd : kd).add((long) s.dim(a));
            (reduced[a] ? rs : ks).add(x.strides()[a]);
        }
        // an offset view (a slice read in place) starts at its first element: fold it into the pointer
        Step.Ptr in = ptr(x);
        long outputs = kd.stream().reduce(1L, Math::multiplyExact);
        long count = rd.stream().reduce(1L, Math::multiplyExact);
        long splits = ReduceSpec.splitsFor(outputs, count);
        if (splits == 1) {
            ReduceSpec spec = new ReduceSpec("lt_reduce", ReduceSpec.Stage.DIRECT, kd, ks, rd, rs, 1, x.dtype(), o.dtype());
            cx.launch(spec, List.of(in, ptr(o), new Step.I64(outputs)));
            return;
        }
        Buf ws = cx.transientBuf(splits * outputs * 8);
        ReduceSpec partial = new ReduceSpec("lt_reduce", ReduceSpec.Stage.PARTIAL, kd, ks, rd, rs, splits, x.dtype(), o.dtype());
        cx.launch(partial, List.of(in, new Step.Ptr(ws, splits * outputs * 8), new Step.I64(splits * outputs)));
        ReduceSpec finish = new ReduceSpec("lt_reduce", ReduceSpec.Stage.FINISH, kd, ks, rd, rs, splits, x.dtype(), o.dtype());
        cx.launch(finish, List.of(new Step.Ptr(ws, splits * outputs * 8), ptr(o), new Step.I64(outputs)));
    }

    private static void scatterAdd(Kernel k, LoweringContext cx) {
        View upd = cx.contiguous(cx.in(k, 0));
        View ids = cx.contiguous(cx.in(k, 1));
        View o = cx.out(k);
        if (ids.dtype() != DType.I32 && ids.dtype() != DType.I64) {
            throw new CodegenException("scatter_add ids must be i32 or i64, found " + ids.dtype());
        }
        if (upd.dtype() != o.dtype()) {
            throw new CodegenException("scatter_add from " + upd.dtype() + " to " + o.dtype() + ": it keeps the dtype");
        }
        Shape os = o.shape();
        int rank = os.rank();
        int ax = k.node().attrs().getInt("axis", 0);
        int axis = ax < 0 ? ax + rank : ax;
        long outer = 1;
        for (int a = 0; a < axis; a++) {
            outer *= os.dim(a);
        }
        long inner = 1;
        for (int a = axis + 1; a < rank; a++) {
            inner *= os.dim(a);
        }
        long size = os.dim(axis);
        long count = Math.max(1, ids.shape().numel());
        if (size == 0 || inner == 0 || outer == 0) {
            throw new CodegenException("scatter_add into an empty table " + os + " has nothing to compute on CUDA");
        }
        if (ScatterAddSortedSpec.applies(count, size, cx.target)) {
            // ids sorted by (row, position) once, then each row finds its ids by binary search: count x inner work,
            // where the scan below is size x count comparisons (the same sums, bit for bit)
            long bytes = ScatterAddSortedSpec.keyBytes(count);
            Buf keys = cx.transientBuf(bytes);
            cx.launch(new ScatterAddSortedSpec("lt_scatter_sort", ScatterAddSortedSpec.Stage.SORT, outer, count, size, inner, o.dtype(),
                    ids.dtype()), List.of(ptr(ids), new Step.Ptr(keys, bytes), new Step.I64(1)));
            cx.launch(new ScatterAddSortedSpec("lt_scatter_add", ScatterAddSortedSpec.Stage.SUM, outer, count, size, inner, o.dtype(),
                    ids.dtype()), List.of(ptr(upd), new Step.Ptr(keys, bytes), ptr(o), new Step.I64(outer * size)));
            return;
        }
        ScatterAddSpec spec = new ScatterAddSpec("lt_scatter_add", outer, count, size, inner, o.dtype(), ids.dtype());
        cx.launch(spec, List.of(ptr(upd), ptr(ids), ptr(o), new Step.I64(outer * size)));
    }
}
