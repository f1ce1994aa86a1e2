package dev.lantern.onnx;

import dev.lantern.frontend.Value;
import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Ops that move or reinterpret elements: reshapes, permutes, slices, splits, concatenation, gathers along a
 * constant index. On host values they fold; on run-time tensors they become Lantern views and copies.
 */
final class MovementOps {
    private MovementOps() {}

    static void register(Map<String, OpImporter> t) {
        t.put("Reshape", MovementOps::reshape);
        t.put("Flatten", MovementOps::flatten);
        t.put("Unsqueeze", MovementOps::unsqueeze);
        t.put("Squeeze", MovementOps::squeeze);
        t.put("Transpose", MovementOps::transpose);
        t.put("Concat", MovementOps::concat);
        t.put("Split", MovementOps::split);
        t.put("Slice", MovementOps::slice);
        t.put("Gather", MovementOps::gather);
        t.put("Expand", MovementOps::expand);
    }

    /** Output 0 := input 0 with {@code dims}: a host reshape, or a Lantern reshape (none when the shape holds). */
    static void reshapeTo(ImportContext c, long[] dims) {
        long[] in = c.dimsOf(0);
        long n = TensorDecoder.checkShape(dims, c.limits, c.where() + ": result shape");
        if (n != TensorDecoder.checkShape(in, c.limits, c.where() + ": input shape")) {
            throw c.fail("cannot reshape " + Arrays.toString(in) + " to " + Arrays.toString(dims));
        }
        if (c.foldable(0)) {
            c.output(0, c.host(0).withDims(dims));
            return;
        }
        Value x = c.run(0);
        c.output(0, Arrays.equals(in, dims) ? x : c.builder.reshape(x, c.shape(dims).dims()));
    }

    private static void reshape(ImportContext c) {
        long[] in = c.dimsOf(0);
        long[] target = c.host(1).longs();
        boolean allowZero = Attributes.getInt(c, "allowzero", 0) != 0;
        long known = 1;
        int infer = -1;
        long[] out = target.clone();
        for (int i = 0; i < out.length; i++) {
            if (out[i] == 0 && !allowZero) {
                if (i >= in.length) {
                    throw c.fail("shape " + Arrays.toString(target) + " copies dim " + i + " of a rank-" + in.length + " input");
                }
                out[i] = in[i];
            }
            if (out[i] == -1) {
                if (infer >= 0) {
                    throw c.fail("shape " + Arrays.toString(target) + " has more than one -1");
                }
                infer = i;
            } else if (out[i] < 0) {
                throw c.fail("shape " + Arrays.toString(target) + " has a negative dimension");
            } else {
                known = Math.multiplyExact(known, out[i]);
            }
        }
        if (infer >= 0) {
            long total = HostTensor.numel(in);
            if (known == 0 || total % known != 0) {
                throw c.fail("cannot reshape " + Arrays.toString(in) + " to " + Arrays.toString(target));
            }
            out[infer] = total / known;
        }
        reshapeTo(c, out);
    }

    private static void flatten(ImportContext c) {
        long[] in = c.dimsOf(0);
        int axis = (int) Attributes.getInt(c, "axis", 1);
        axis = axis < 0 ? axis + in.length : axis;
        if (axis < 0 || axis > in.length) {
            throw c.fail("axis " + axis + " is out of range for rank " + in.length);
        }
        reshapeTo(c, new long[] {HostTensor.numel(Arrays.copyOf(in, axis)), HostTensor.numel(Arrays.copyOfRange(in, axis, in.length))});
    }

    /** Axes from input 1 (opset 13 on) or the attribute of older opsets. */
    private static long[] axes(ImportContext c) {
        if (c.hasInput(1)) {
            return c.host(1).longs();
        }
        return Attributes.getInts(c, "axes");
    }

    private static void unsqueeze(ImportContext c) {
        long[] in = c.dimsOf(0);
        long[] axes = axes(c);
        if (axes == null) {
            throw c.fail("Unsqueeze needs axes");
        }
        int rank = in.length + axes.length;
        boolean[] unit = new boolean[rank];
        for (long a : axes) {
            int k = c.axis(a, rank);
            if (unit[k]) {
                throw c.fail("axis " + a + " is repeated");
            }
            unit[k] = true;
        }
        long[] out = new long[rank];
        for (int i = 0, j = 0; i < rank; i++) {
            out[i] = unit[i] ? 1 : in[j++];
        }
        reshapeTo(c, out);
    }

    private static void squeeze(ImportContext c) {
        long[] in = c.dimsOf(0);
        long[] axes = axes(c);
        boolean[] drop = new boolean[in.length];
        for (int i = 0; i < in.length; i++) {
            drop[i] = axes == null && in[i] == 1;
        }
        if (axes != null) {
            for (long a : axes) {
                int k = c.axis(a, in.length);
                if (in[k] != 1) {
                    throw c.fail("cannot squeeze axis " + a + " of " + Arrays.toString(in) + ": it is not 1");
                }
                drop[k] = true;
            }
        }
        long[] out = new long[in.length];
        int n = 0;
        for (int i = 0; i < in.length; i++) {
            if (!drop[i]) {
                out[n++] = in[i];
            }
        }
        reshapeTo(c, Arrays.copyOf(out, n));
    }

    private static void transpose(ImportContext c) {
        int rank = c.dimsOf(0).length;
        long[] p = Attributes.getInts(c, "perm");
        int[] perm = new int[rank];
        boolean[] seen = new boolean[rank];
        for (int i = 0; i < rank; i++) {
            perm[i] = p == null ? rank - 1 - i : p.length == rank ? c.axis(p[i], rank) : -1;
            if (perm[i] < 0 || seen[perm[i]]) {
                throw c.fail("perm " + Arrays.toString(p) + " is not a permutation of rank " + rank);
            }
            seen[perm[i]] = true;
        }
        if (c.foldable(0)) {
            c.output(0, c.fold.transpose(c.host(0), perm));
        } else {
            c.output(0, c.builder.permute(c.run(0), perm));
        }
    }

    private static void concat(ImportContext c) {
        int n = c.node().getInputCount();
        if (n == 0) {
            throw c.fail("Concat needs inputs");
        }
        int rank = c.dimsOf(0).length;
        int axis = c.axis(Attributes.getInt(c, "axis", 0), rank);
        if (c.allHost()) {
            List<HostTensor> in = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                in.add(c.host(i));
            }
            c.output(0, c.fold.concat(in, axis));
            return;
        }
        List<Value> in = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            if (c.dimsOf(i).length == rank && c.dimsOf(i)[axis] == 0) {
                continue; // exporters concatenate empty tensors (an empty past); Lantern's slices cannot be empty
            }
            in.add(c.run(i));
        }
        c.output(0, in.size() == 1 ? in.getFirst() : c.op(Op.CONCAT, Attrs.of("axis", axis), in.toArray(Value[]::new)));
    }

    private static void split(ImportContext c) {
        long[] in = c.dimsOf(0);
        int axis = c.axis(Attributes.getInt(c, "axis", 0), in.length);
        int outs = c.node().getOutputCount();
        long[] sizes = c.hasInput(1) ? c.host(1).longs() : Attributes.getInts(c, "split");
        if (sizes == null) {
            long parts = Attributes.getInt(c, "num_outputs", outs);
            if (parts <= 0 || parts != outs) {
                throw c.fail("num_outputs " + parts + " does not match the " + outs + " outputs");
            }
            long chunk = (in[axis] + parts - 1) / parts; // the last part is smaller when the axis does not divide
            sizes = new long[outs];
            for (int i = 0; i < outs; i++) {
                sizes[i] = Math.max(0, Math.min(chunk, in[axis] - i * chunk));
            }
        }
        if (sizes.length != outs || Arrays.stream(sizes).anyMatch(s -> s < 0) || Arrays.stream(sizes).sum() != in[axis]) {
            throw c.fail("split " + Arrays.toString(sizes) + " does not divide axis " + axis + " of " + Arrays.toString(in) + " into " + outs + " outputs");
        }
        long start = 0;
        for (int i = 0; i < outs; i++) {
            sliceAxis(c, i, axis, start, start + sizes[i]);
            start += sizes[i];
        }
    }

    /** Output {@code out} := input 0 restricted to [start, end) along {@code axis}, step 1. */
    private static void sliceAxis(ImportContext c, int out, int axis, long start, long end) {
        c.define(c.node().getOutput(out), sliceVal(c, c.val(c.requireInput(0)), axis, start, end, 1));
    }

    /** {@code v} restricted to [start, end) by {@code step} along {@code axis} (bounds already clamped). */
    private static Val sliceVal(ImportContext c, Val v, int axis, long start, long end, long step) {
        if (!(v instanceof Val.Run r)) {
            HostTensor h = v instanceof Val.Host host ? host.tensor() : c.host(0);
            return new Val.Host(c.fold.slice(h, axis, start, end, step));
        }
        Value x = r.value();
        if (step != 1) {
            throw ElementwiseOps.unsupported(c, "with step " + step + " on a run-time tensor");
        }
        if (start == 0 && end == x.shape().dim(axis)) {
            return r;
        }
        if (end <= start) {
            throw ElementwiseOps.unsupported(c, "giving an empty run-time tensor");
        }
        return new Val.Run(c.op(Op.SLICE, Attrs.of("axis", axis, "start", (int) start, "end", (int) end), x));
    }

    private static void slice(ImportContext c) {
        long[] in = c.dimsOf(0);
        long[] starts = c.host(1).longs();
        long[] ends = c.host(2).longs();
        long[] axes = c.hasInput(3) ? c.host(3).longs() : null;
        long[] steps = c.hasInput(4) ? c.host(4).longs() : null;
        if (ends.length != starts.length || (axes != null && axes.length != starts.length) || (steps != null && steps.length != starts.length)) {
            throw c.fail("starts, ends, axes and steps differ in length");
        }
        boolean[] seen = new boolean[in.length];
        Val cur = c.val(c.requireInput(0));
        for (int k = 0; k < starts.length; k++) {
            int axis = c.axis(axes == null ? k : axes[k], in.length);
            if (seen[axis]) {
                throw c.fail("axis " + axis + " is sliced twice");
            }
            seen[axis] = true;
            long step = steps == null ? 1 : steps[k];
            long dim = in[axis];
            if (step == 0) {
                throw c.fail("a Slice step must not be 0");
            }
            // ONNX clamping: negative bounds count from the end; starts clamp to [0, dim] (or [0, dim-1] backwards)
            long s = starts[k] < 0 ? Math.max(0, starts[k] + dim) : starts[k];
            long e = ends[k] < 0 ? Math.max(ends[k], Long.MIN_VALUE / 2) + dim : ends[k];
            if (step > 0) {
                s = Math.min(s, dim);
                e = Math.max(0, Math.min(e, dim));
            } else {
                s = Math.min(s, dim - 1);
                e = Math.max(-1, Math.min(e, dim - 1));
            }
            cur = sliceVal(c, cur, axis, s, e, step);
        }
        c.define(c.node().getOutput(0), cur);
    }

    /**
     * Gather on host values (folded), along one constant index of a run-time tensor (a slice), or else
     * Lantern's gather: run-time ids (an embedding lookup from a weight or a value), or several constant
     * ids from a run-time tensor, range-checked here since they are known.
     */
    private static void gather(ImportContext c) {
        long[] in = c.dimsOf(0);
        int axis = c.axis(Attributes.getInt(c, "axis", 0), in.length);
        if (c.allHost()) {
            c.output(0, c.fold.gather(c.host(0), c.host(1), axis));
            return;
        }
        if (!c.isHost(1)) {
            Value ids = c.run(1);
            if (ids.type().dtype() != dev.lantern.ir.DType.I64 && ids.type().dtype() != dev.lantern.ir.DType.I32) {
                throw c.fail("indices must be int32 or int64, found " + ids.type());
            }
            c.output(0, c.op(Op.GATHER, Attrs.of("axis", axis), c.run(0), ids));
            return;
        }
        HostTensor idx = c.host(1);
        if (idx.numel() != 1) {
            for (long k : idx.longs()) {
                if (k < -in[axis] || k >= in[axis]) {
                    throw c.fail("index " + k + " is outside axis " + axis + " of " + Arrays.toString(in));
                }
            }
            c.output(0, c.op(Op.GATHER, Attrs.of("axis", axis), c.run(0), c.run(1)));
            return;
        }
        long k = idx.longs()[0];
        long j = k < 0 ? k + in[axis] : k;
        if (j < 0 || j >= in[axis]) {
            throw c.fail("index " + k + " is outside axis " + axis + " of " + Arrays.toString(in));
        }
        Value x = c.run(0);
        Value s = in[axis] == 1 ? x : c.op(Op.SLICE, Attrs.of("axis", axis, "start", (int) j, "end", (int) j + 1), x);
        long[] out = new long[in.length - 1 + idx.rank()];
        for (int i = 0, o = 0; i < in.length; i++) {
            if (i != axis) {
                out[o++] = in[i];
            } else if (idx.rank() == 1) {
                out[o++] = 1;
            }
        }
        c.output(0, c.builder.reshape(s, c.shape(out).dims()));
    }

    private static void expand(ImportContext c) {
        long[] target = c.host(1).longs();
        long[] in = c.dimsOf(0);
        long[] out = HostOps.broadcast(List.of(in, target));
        if (c.foldable(0) && java.util.Arrays.stream(out).reduce(1, Math::multiplyExact) <= c.limits.maxFoldElements()) {
            c.output(0, c.fold.mapTo(List.of(c.host(0)), out, c.host(0).elemType(), v -> v[0]));
        } else {
            c.output(0, broadcastTo(c, c.run(0), in, out));
        }
    }

    /**
     * A run-time tensor broadcast to {@code out} with existing ops: unit axes are prepended by a reshape, then
     * each axis of size 1 that grows to n is a gather of n zero indices along it (grouped-query attention's
     * repeat of the K/V heads is such an Expand).
     */
    static Value broadcastTo(ImportContext c, Value x, long[] in, long[] out) {
        c.shape(out); // the result's size is checked before any index vector is made
        for (long d : out) {
            if (d > c.limits.maxFoldElements()) {
                throw c.fail("Expand of a run-time tensor to " + Arrays.toString(out) + ": an axis longer than "
                        + c.limits.maxFoldElements() + " is not supported");
            }
        }
        if (in.length < out.length) {
            long[] padded = new long[out.length];
            Arrays.fill(padded, 1);
            System.arraycopy(in, 0, padded, out.length - in.length, in.length);
            x = c.builder.reshape(x, c.shape(padded).dims());
            in = padded;
        }
        for (int axis = 0; axis < out.length; axis++) {
            if (in[axis] != out[axis]) {
                // a filled constant, not a param: fusion recognises the K/V head repeat by its all-zero ids
                Value zeros = out[axis] == 1 ? c.runHost("expand" + axis, HostTensor.vector(OnnxTypes.INT64, new long[1]))
                        : c.builder.constant(0, DType.I64, Shape.of((int) out[axis]));
                x = c.op(Op.GATHER, Attrs.of("axis", axis), x, zeros);
            }
        }
        return x;
    }
}
