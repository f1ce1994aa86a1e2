package dev.lantern.onnx;

import dev.lantern.frontend.Value;
import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Op;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The run-time forms of And, Where and GatherND that a padding mask from an attention_mask input needs
 * (transformers 5's BERT: {@code where(and(causal_or_ones, gather_nd(bool(mask), idx)), 0, finfo.min)}), made
 * of existing IR ops: run-time booleans are f32 0/1 (the kernels compute floating types only), And is a product, Where with a run-time
 * condition is {@code c·x + (1−c)·y} (exact for finite x and y, which is checked), GatherND with indices known
 * at import time is a gather of flat row indices. Forms known at import time go to the folding importers.
 */
final class MaskOps {
    private MaskOps() {}

    static void register(Map<String, OpImporter> t) {
        OpImporter and = t.get("And");
        OpImporter where = t.get("Where");
        OpImporter gatherNd = t.get("GatherND");
        OpImporter cast = t.get("Cast");
        t.put("Cast", c -> {
            if (c.allHost() || Attributes.getInt(c, "to", 0) != OnnxTypes.BOOL) {
                cast.apply(c);
            } else {
                c.output(0, boolOfInteger(c));
            }
        });
        t.put("And", c -> {
            if (c.allHost()) {
                and.apply(c);
            } else {
                c.output(0, c.op(Op.MUL, Attrs.EMPTY, f32(c, 0), f32(c, 1)));
            }
        });
        t.put("Where", c -> {
            if (c.isHost(0) || !c.isHost(1) || !c.isHost(2)) {
                where.apply(c);
            } else {
                whereRunTimeCondition(c);
            }
        });
        t.put("GatherND", c -> {
            if (c.allHost() || !c.isHost(1)) {
                gatherNd.apply(c);
            } else {
                gatherNdHostIndices(c);
            }
        });
    }

    /**
     * A run-time Cast of integers to bool, as f32 0/1 (the kernels compute floating types only, and cast
     * neither from integers): a gather from the table [0, 1], right for -1, 0 and 1 (a negative id counts from
     * the end) and an {@link dev.lantern.ir.IndexOutOfRangeException} at run time for any other value, never a
     * wrong one. Attention masks hold 0 and 1.
     */
    private static Value boolOfInteger(ImportContext c) {
        Value x = c.run(0);
        DType d = x.type().dtype();
        if (d != DType.I32 && d != DType.I64) {
            throw ElementwiseOps.unsupported(c, "to bool at run time from " + d.text() + " (integers only)");
        }
        Value table = c.runHost("bool_table", new HostTensor(OnnxTypes.FLOAT, new long[] {2}, new double[] {0, 1}));
        return c.op(Op.GATHER, Attrs.of("axis", 0), table, x);
    }

    /** Input {@code i} as f32 (booleans as 0 and 1). */
    private static Value f32(ImportContext c, int i) {
        if (c.isHost(i)) {
            HostTensor h = c.host(i);
            return c.runHost("f32in" + i, new HostTensor(OnnxTypes.FLOAT, h.dims(), h.values()));
        }
        Value v = c.run(i);
        return v.type().dtype() == DType.F32 ? v : c.op(Op.CAST, Attrs.of("to", DType.F32.text()), v);
    }

    private static void whereRunTimeCondition(ImportContext c) {
        HostTensor x = c.host(1);
        HostTensor y = c.host(2);
        DType d = OnnxTypes.dtype(x.elemType());
        if (d == null || !OnnxTypes.isFloat(x.elemType()) || x.elemType() != y.elemType()) {
            throw ElementwiseOps.unsupported(c, "with a run-time condition and values of types "
                    + OnnxTypes.name(x.elemType()) + ", " + OnnxTypes.name(y.elemType()));
        }
        if (Arrays.stream(x.values()).anyMatch(v -> !Double.isFinite(v)) || Arrays.stream(y.values()).anyMatch(v -> !Double.isFinite(v))) {
            // c·x + (1−c)·y would give 0·inf = NaN
            throw ElementwiseOps.unsupported(c, "with a run-time condition and infinite or NaN values");
        }
        Value cond = f32(c, 0);
        if (d != DType.F32) {
            cond = c.op(Op.CAST, Attrs.of("to", d.text()), cond);
        }
        Value notCond = c.op(Op.SUB, Attrs.EMPTY, c.builder.constant(1, d), cond);
        Value chosenX = c.op(Op.MUL, Attrs.EMPTY, cond, c.runHost("x", x));
        Value chosenY = c.op(Op.MUL, Attrs.EMPTY, notCond, c.runHost("y", y));
        c.output(0, c.op(Op.ADD, Attrs.EMPTY, chosenX, chosenY));
    }

    /** GatherND (batch_dims 0) of a run-time tensor at indices known at import time. */
    private static void gatherNdHostIndices(ImportContext c) {
        if (Attributes.getInt(c, "batch_dims", 0) != 0) {
            throw ElementwiseOps.unsupported(c, "with batch_dims != 0 on a run-time tensor");
        }
        long[] d = c.dimsOf(0);
        HostTensor idx = c.host(1);
        long[] id = idx.dims();
        int m = id.length == 0 ? 0 : (int) id[id.length - 1];
        if (m < 1 || m > d.length) {
            throw c.fail("indices " + Arrays.toString(id) + " do not fit data " + Arrays.toString(d));
        }
        long tuples = HostTensor.numel(Arrays.copyOf(id, id.length - 1));
        long[] flat = new long[(int) tuples];
        for (int t = 0; t < tuples; t++) {
            long off = 0;
            for (int k = 0; k < m; k++) {
                long v = (long) idx.values()[t * m + k];
                long at = v < 0 ? v + d[k] : v;
                if (at < 0 || at >= d[k]) {
                    throw c.fail("index " + v + " is outside axis " + k + " of " + Arrays.toString(d));
                }
                off = off * d[k] + at;
            }
            flat[t] = off;
        }
        Value x = c.run(0);
        long[] rows = new long[d.length - m + 1];
        rows[0] = HostTensor.numel(Arrays.copyOf(d, m));
        System.arraycopy(d, m, rows, 1, d.length - m);
        x = c.builder.reshape(x, c.shape(rows).dims());
        Value ids = c.runHost("rows", new HostTensor(OnnxTypes.INT64, Arrays.copyOf(id, id.length - 1), HostTensor.vector(OnnxTypes.INT64, flat).values()));
        if (ids.shape().rank() != id.length - 1) { // a single index becomes a scalar constant
            ids = c.builder.reshape(ids, c.shape(Arrays.copyOf(id, id.length - 1)).dims());
        }
        Value y = c.op(Op.GATHER, Attrs.of("axis", 0), x, ids);
        c.output(0, y);
    }
}
