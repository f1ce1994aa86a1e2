package dev.lantern.cuda.lower;

import static dev.lantern.cuda.lower.LoweringContext.dims;

import dev.lantern.cuda.codegen.CodegenException;
import dev.lantern.cuda.codegen.GatherSpec;
import dev.lantern.cuda.codegen.StridedCopySpec;
import dev.lantern.ir.DType;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.kernel.Kernel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * slice, concat and gather: data movement. A slice is one strided copy whose source pointer is
 * offset to the slice's start; a concat one strided copy per input, each writing at its offset
 * into the output's layout; a gather (embedding lookup) one {@link GatherSpec} kernel over a
 * contiguous table and contiguous ids.
 */
final class MovementLowerer implements KernelLowerer {
    @Override
    public void lower(Kernel k, LoweringContext cx) {
        switch (k.node().op()) {
            case SLICE -> slice(k, cx);
            case CONCAT -> concat(k, cx);
            case GATHER -> gather(k, cx);
            default -> throw new CodegenException("no data-movement kernel for " + k.node().op().text());
        }
    }

    private static void slice(Kernel k, LoweringContext cx) {
        View x = cx.in(k, 0);
        View o = cx.out(k);
        requireSameDtype(x, o, "slice");
        SliceAlias alias = SliceAlias.of(k, cx.kernel, x, cx);
        if (alias != null) {
            cx.aliases.put(k.output().value(), alias); // its readers take it in place: no copy
            return;
        }
        int axis = axis(k.node().attrs().getInt("axis", 0), o.shape().rank());
        long start = k.node().attrs().getInt("start", 0);
        int bytes = x.dtype().bytes();
        long offset = start * x.strides()[axis] * bytes;
        StridedCopySpec spec = new StridedCopySpec("lt_slice", dims(o.shape()), x.strideList(), o.strideList(), o.dtype());
        long read = LaunchContract.extentBytes(longDims(o.shape()), x.strides(), bytes);
        cx.launch(spec, List.of(new Step.Ptr(x.buf(), read, offset), LoweringContext.ptr(o), new Step.I64(o.shape().numel())));
    }

    private static void concat(Kernel k, LoweringContext cx) {
        View o = cx.out(k);
        int axis = axis(k.node().attrs().getInt("axis", 0), o.shape().rank());
        int bytes = o.dtype().bytes();
        long at = 0;
        for (int i = 0; i < k.inputs().size(); i++) {
            View v = cx.in(k, i);
            requireSameDtype(v, o, "concat");
            if (v.shape().numel() > 0) {
                long offset = at * o.strides()[axis] * bytes;
                StridedCopySpec spec = new StridedCopySpec("lt_concat", dims(v.shape()), v.strideList(), o.strideList(), o.dtype());
                long written = LaunchContract.extentBytes(longDims(v.shape()), o.strides(), bytes);
                cx.launch(spec, List.of(LoweringContext.ptr(v), new Step.Ptr(o.buf(), written, offset), new Step.I64(v.shape().numel())));
            }
            at += v.shape().dim(axis);
        }
    }

    private static void gather(Kernel k, LoweringContext cx) {
        View table = cx.contiguous(cx.in(k, 0));
        View ids = cx.in(k, 1);
        View o = cx.out(k);
        if (ids.dtype() != DType.I32 && ids.dtype() != DType.I64) {
            throw new CodegenException("gather ids must be i32 or i64, found " + ids.dtype());
        }
        if (!ids.contiguous()) {
            throw new CodegenException("gather with strided ids " + ids.dtype() + ids.shape() + " is not supported on CUDA");
        }
        requireSameDtype(table, o, "gather");
        Shape ts = table.shape();
        int axis = axis(k.node().attrs().getInt("axis", 0), ts.rank());
        long outer = 1;
        for (int a = 0; a < axis; a++) {
            outer *= ts.dim(a);
        }
        long inner = 1;
        for (int a = axis + 1; a < ts.rank(); a++) {
            inner *= ts.dim(a);
        }
        long count = Math.max(1, ids.shape().numel());
        GatherSpec spec = new GatherSpec("lt_gather", outer, count, ts.dim(axis), inner, o.dtype(), ids.dtype());
        cx.launch(spec, new ArrayList<>(List.of(LoweringContext.ptr(table), LoweringContext.ptr(ids), LoweringContext.ptr(o),
                new Step.I64(o.shape().numel()))));
    }

    private static void requireSameDtype(View in, View out, String op) {
        if (in.dtype() != out.dtype()) {
            throw new CodegenException(op + " from " + in.dtype() + " to " + out.dtype() + ": a copy keeps the dtype");
        }
    }

    private static int axis(int axis, int rank) {
        int a = axis < 0 ? axis + rank : axis;
        if (a < 0 || a >= rank) {
            throw new CodegenException("axis " + axis + " out of range for rank " + rank);
        }
        return a;
    }

    private static long[] longDims(Shape s) {
        return Arrays.stream(s.dims()).asLongStream().toArray();
    }

    static boolean handles(Op op) {
        return op == Op.SLICE || op == Op.CONCAT || op == Op.GATHER;
    }
}
