package dev.lantern.onnx;

import onnx.Onnx.AttributeProto;
import onnx.Onnx.TensorProto;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Ops whose results are known at import time once the input shapes are bound: constants, Shape and Size,
 * ConstantOfShape, Range, Trilu, CumSum, GatherElements, GatherND. Exporters build masks and reshape targets from them; folding them leaves
 * the Lantern graph with static shapes only.
 */
final class FoldOps {
    private FoldOps() {}

    static void register(Map<String, OpImporter> t) {
        t.put("Constant", FoldOps::constant);
        t.put("Shape", FoldOps::shape);
        t.put("Size", c -> c.output(0, HostTensor.scalar(OnnxTypes.INT64, HostTensor.numel(c.dimsOf(0)))));
        t.put("ConstantOfShape", FoldOps::constantOfShape);
        t.put("Range", FoldOps::range);
        t.put("Trilu", FoldOps::trilu);
        t.put("CumSum", FoldOps::cumSum);
        t.put("GatherElements", FoldOps::gatherElements);
        t.put("GatherND", FoldOps::gatherNd);
        t.put("ReduceMean", c -> {
            throw ElementwiseOps.unsupported(c, "(outside a recognised LayerNorm or RMSNorm pattern)");
        });
        t.put("ReduceSum", c -> {
            throw ElementwiseOps.unsupported(c, "(reductions)");
        });
    }

    private static void constant(ImportContext c) {
        if (c.node().getAttributeCount() != 1) {
            throw c.fail("Constant takes exactly one value attribute, found " + c.node().getAttributeCount());
        }
        AttributeProto a = c.node().getAttribute(0);
        HostTensor h = switch (a.getName()) {
            case "value" -> {
                TensorProto t = Attributes.getTensor(c, "value");
                c.define(c.node().getOutput(0), new Val.Weight(t.toBuilder().setName(c.node().getOutput(0)).build()));
                yield null;
            }
            case "value_float" -> HostTensor.scalar(OnnxTypes.FLOAT, (float) Attributes.getFloat(c, "value_float", 0));
            case "value_int" -> HostTensor.scalar(OnnxTypes.INT64, Attributes.getInt(c, "value_int", 0));
            case "value_ints" -> HostTensor.vector(OnnxTypes.INT64, Attributes.getInts(c, "value_ints"));
            case "value_floats" -> {
                AttributeProto f = Attributes.find(c, "value_floats", AttributeProto.AttributeType.FLOATS);
                double[] v = new double[f.getFloatsCount()];
                for (int i = 0; i < v.length; i++) {
                    v[i] = f.getFloats(i);
                }
                yield new HostTensor(OnnxTypes.FLOAT, new long[] {v.length}, v);
            }
            default -> throw ElementwiseOps.unsupported(c, "with attribute '" + a.getName() + "'");
        };
        if (h != null) {
            c.output(0, h);
        }
    }

    /** The input's dims [start, end) as int64; the input itself is never read. */
    private static void shape(ImportContext c) {
        long[] d = c.dimsOf(0);
        int r = d.length;
        long start = Attributes.getInt(c, "start", 0);
        long end = Attributes.getInt(c, "end", r);
        start = Math.clamp(start < 0 ? start + r : start, 0, r);
        end = Math.clamp(end < 0 ? end + r : end, 0, r);
        c.output(0, HostTensor.vector(OnnxTypes.INT64, Arrays.copyOfRange(d, (int) start, (int) Math.max(start, end))));
    }

    private static void constantOfShape(ImportContext c) {
        long[] dims = c.host(0).longs();
        TensorDecoder.checkShape(dims, c.limits, c.where() + ": the result");
        TensorProto v = Attributes.getTensor(c, "value");
        int type = OnnxTypes.FLOAT;
        double value = 0;
        if (v != null) {
            HostTensor h = c.hostOf(v);
            type = h.elemType();
            value = h.scalarValue();
        }
        final double fill = value;
        c.output(0, c.fold.mapTo(List.of(), dims, type, args -> fill));
    }

    private static void range(ImportContext c) {
        HostTensor start = c.host(0);
        double s = start.scalarValue();
        double limit = c.host(1).scalarValue();
        double delta = c.host(2).scalarValue();
        if (delta == 0 || Double.isNaN(s) || Double.isNaN(limit) || Double.isNaN(delta)) {
            throw c.fail("Range needs a non-zero delta and numbers, found " + s + ", " + limit + ", " + delta);
        }
        double count = Math.max(Math.ceil((limit - s) / delta), 0);
        if (count > c.limits.maxFoldElements()) {
            throw c.fail("Range of " + count + " elements is too large to compute at import time");
        }
        double[] v = c.fold.alloc(new long[] {(long) count});
        for (int i = 0; i < v.length; i++) {
            v[i] = OnnxTypes.round(start.elemType(), s + i * delta);
        }
        c.output(0, new HostTensor(start.elemType(), new long[] {v.length}, v));
    }

    /** Keeps the upper (or lower) triangle of the last two axes, from diagonal k. */
    private static void trilu(ImportContext c) {
        HostTensor x = c.isHost(0) ? c.host(0) : null;
        if (x == null) {
            throw ElementwiseOps.unsupported(c, "on a run-time tensor");
        }
        long k = c.hasInput(1) ? (long) c.host(1).scalarValue() : 0;
        boolean upper = Attributes.getInt(c, "upper", 1) != 0;
        long[] d = x.dims();
        if (d.length < 2) {
            throw c.fail("Trilu needs rank >= 2, found " + Arrays.toString(d));
        }
        long rows = d[d.length - 2];
        long cols = d[d.length - 1];
        double[] out = x.values().clone();
        for (int i = 0; i < out.length; i++) {
            long col = i % cols;
            long row = (i / cols) % rows;
            boolean keep = upper ? col - row >= k : col - row <= k;
            if (!keep) {
                out[i] = 0;
            }
        }
        c.output(0, new HostTensor(x.elemType(), d, out));
    }

    /** Running sums along one axis (exclusive and reverse as attributes), on a host value. */
    private static void cumSum(ImportContext c) {
        if (!c.allHost()) {
            throw ElementwiseOps.unsupported(c, "on a run-time tensor");
        }
        HostTensor x = c.host(0);
        long[] d = x.dims();
        int axis = c.axis((long) c.host(1).scalarValue(), d.length);
        boolean exclusive = Attributes.getInt(c, "exclusive", 0) != 0;
        boolean reverse = Attributes.getInt(c, "reverse", 0) != 0;
        long inner = HostTensor.numel(Arrays.copyOfRange(d, axis + 1, d.length));
        long n = d[axis];
        double[] out = c.fold.alloc(d);
        for (long base = 0; base < out.length; base += n * inner) {
            for (long e = 0; e < inner; e++) {
                double acc = 0;
                for (long k = 0; k < n; k++) {
                    long j = reverse ? n - 1 - k : k;
                    int at = (int) (base + j * inner + e);
                    double v = x.values()[at];
                    out[at] = OnnxTypes.round(x.elemType(), exclusive ? acc : acc + v);
                    acc += v;
                }
            }
        }
        c.output(0, new HostTensor(x.elemType(), d, out));
    }

    /** out[i][j]... = data[...][index[i][j]...][...] along one axis, on host values. */
    private static void gatherElements(ImportContext c) {
        if (!c.allHost()) {
            throw ElementwiseOps.unsupported(c, "on a run-time tensor");
        }
        HostTensor data = c.host(0);
        HostTensor idx = c.host(1);
        long[] d = data.dims();
        long[] id = idx.dims();
        int axis = c.axis(Attributes.getInt(c, "axis", 0), d.length);
        if (id.length != d.length) {
            throw c.fail("indices of rank " + id.length + " for data of rank " + d.length);
        }
        long[] strides = new long[d.length];
        long acc = 1;
        for (int i = d.length - 1; i >= 0; i--) {
            strides[i] = acc;
            acc *= d[i];
        }
        double[] out = c.fold.alloc(id);
        long[] pos = new long[id.length];
        for (int i = 0; i < out.length; i++) {
            long off = 0;
            for (int k = 0; k < id.length; k++) {
                long at = pos[k];
                if (k == axis) {
                    long v = (long) idx.values()[i];
                    at = v < 0 ? v + d[k] : v;
                }
                if (at < 0 || at >= d[k]) {
                    throw c.fail("index " + Arrays.toString(pos) + " is outside " + Arrays.toString(d));
                }
                off += at * strides[k];
            }
            out[i] = data.values()[(int) off];
            for (int k = id.length - 1; k >= 0 && ++pos[k] == id[k]; k--) {
                pos[k] = 0;
            }
        }
        c.output(0, new HostTensor(data.elemType(), id, out));
    }

    /**
     * GatherND on host values: the last axis of the indices (length m) picks data[batch..., i0, ..., im-1, :].
     * The dynamo exporter writes it in transformers' packed-sequence check, over position ids derived from shapes.
     */
    private static void gatherNd(ImportContext c) {
        if (!c.allHost()) {
            throw ElementwiseOps.unsupported(c, "on a run-time tensor");
        }
        HostTensor data = c.host(0);
        HostTensor idx = c.host(1);
        long[] d = data.dims();
        long[] id = idx.dims();
        int b = (int) Attributes.getInt(c, "batch_dims", 0);
        int m = id.length == 0 ? -1 : (int) id[id.length - 1];
        if (b < 0 || id.length < 1 || b >= id.length || m < 1 || b + m > d.length
                || !Arrays.equals(Arrays.copyOf(d, b), Arrays.copyOf(id, b))) {
            throw c.fail("indices " + Arrays.toString(id) + " with batch_dims " + b + " do not fit data " + Arrays.toString(d));
        }
        long[] outDims = new long[id.length - 1 + d.length - b - m];
        System.arraycopy(id, 0, outDims, 0, id.length - 1);
        System.arraycopy(d, b + m, outDims, id.length - 1, d.length - b - m);
        long inner = HostTensor.numel(Arrays.copyOfRange(d, b + m, d.length));
        long perBatchData = HostTensor.numel(Arrays.copyOfRange(d, b, d.length));
        long perBatchTuples = HostTensor.numel(Arrays.copyOfRange(id, b, id.length - 1));
        double[] out = c.fold.alloc(outDims);
        long tuples = HostTensor.numel(Arrays.copyOf(id, id.length - 1));
        for (long t = 0; t < tuples; t++) {
            long off = (t / perBatchTuples) * perBatchData;
            for (int k = 0; k < m; k++) {
                long v = (long) idx.values()[(int) (t * m + k)];
                long dim = d[b + k];
                long at = v < 0 ? v + dim : v;
                if (at < 0 || at >= dim) {
                    throw c.fail("index " + v + " is outside axis " + (b + k) + " of " + Arrays.toString(d));
                }
                off = off + at * HostTensor.numel(Arrays.copyOfRange(d, b + k + 1, d.length));
            }
            System.arraycopy(data.values(), (int) off, out, (int) (t * inner), (int) inner);
        }
        c.output(0, new HostTensor(data.elemType(), outDims, out));
    }

    /** Host MatMuls worth folding: operands of rank 2 or more and at most 2^24 multiply-adds. */
    static boolean matmulFoldable(long[] a, long[] b) {
        if (a.length < 2 || b.length < 2 || a[a.length - 1] != b[b.length - 2]) {
            return false;
        }
        try {
            long[] batch = HostOps.broadcast(List.of(Arrays.copyOf(a, a.length - 2), Arrays.copyOf(b, b.length - 2)));
            long work = Math.multiplyExact(Math.multiplyExact(HostTensor.numel(batch), a[a.length - 2]),
                    Math.multiplyExact(a[a.length - 1], b[b.length - 1]));
            return work <= 1 << 24;
        } catch (ArithmeticException | OnnxImportException e) {
            return false;
        }
    }

    /** NumPy matmul of two host values of rank >= 2 (batch axes broadcast), in double, rounded to the type. */
    static HostTensor matmul(ImportContext c, HostTensor a, HostTensor b) {
        long[] da = a.dims();
        long[] db = b.dims();
        int m = (int) da[da.length - 2];
        int k = (int) da[da.length - 1];
        int n = (int) db[db.length - 1];
        long[] ba = Arrays.copyOf(da, da.length - 2);
        long[] bb = Arrays.copyOf(db, db.length - 2);
        long[] batch = HostOps.broadcast(List.of(ba, bb));
        long[] outDims = Arrays.copyOf(batch, batch.length + 2);
        outDims[batch.length] = m;
        outDims[batch.length + 1] = n;
        double[] out = c.fold.alloc(outDims);
        long batches = HostTensor.numel(batch);
        long[] pos = new long[batch.length];
        for (long t = 0; t < batches; t++) {
            long offA = batchOffset(pos, ba) * m * k;
            long offB = batchOffset(pos, bb) * k * n;
            for (int i = 0; i < m; i++) {
                for (int j = 0; j < n; j++) {
                    double acc = 0;
                    for (int p = 0; p < k; p++) {
                        acc += a.values()[(int) (offA + (long) i * k + p)] * b.values()[(int) (offB + (long) p * n + j)];
                    }
                    out[(int) ((t * m + i) * n + j)] = OnnxTypes.round(a.elemType(), acc);
                }
            }
            for (int d = batch.length - 1; d >= 0 && ++pos[d] == batch[d]; d--) {
                pos[d] = 0;
            }
        }
        return new HostTensor(a.elemType(), outDims, out);
    }

    /** The flat batch index in an operand of batch shape {@code dims} (right-aligned, size-1 axes broadcast). */
    private static long batchOffset(long[] pos, long[] dims) {
        long off = 0;
        for (int i = 0; i < dims.length; i++) {
            long p = pos[pos.length - dims.length + i];
            off = off * dims[i] + (dims[i] == 1 ? 0 : p);
        }
        return off;
    }
}
