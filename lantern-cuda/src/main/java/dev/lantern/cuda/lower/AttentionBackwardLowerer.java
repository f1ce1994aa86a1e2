package dev.lantern.cuda.lower;

import static dev.lantern.cuda.lower.LoweringContext.ptr;

import dev.lantern.cuda.codegen.AttentionBackwardSpec;
import dev.lantern.cuda.codegen.CodegenException;
import dev.lantern.cuda.codegen.ElementwiseSpec;
import dev.lantern.ir.DType;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.kernel.Kernel;
import java.util.ArrayList;
import java.util.List;

/**
 * attention's backward ops: attention_lse (one kernel, unless the forward writes it: {@code SavedLse}),
 * attention_grad_q and attention_grad_kv (a DELTA kernel writing rowsum(dy∘o) into a transient f32
 * buffer, then the gradient kernel; the second of the two over the same o and dy reuses the first's
 * delta). q, k, v,
 * o and dy are read in place through their (b, h, s) strides when head_dim is contiguous (the
 * un-permuted o and dy of an {@code out_perm} attention are views), otherwise copied first; the
 * mask through its (b, h, s) strides, 0 on broadcast axes. The tensor-core kernels
 * ({@link AttentionBackwardSpec#fastPath}) also need 16-byte aligned rows: an operand whose strides
 * or offset are not multiples of 8 elements is copied.
 *
 * <p>Where {@link DsDq} defers grad_q to grad_kv, grad_kv launches DELTA, then GRAD_KV_DQ: dk;dv, and
 * dq = scale · dS K into grad_q's output, in one launch whose dS tiles pass through a ring of slots
 * (its flags zeroed by a launch just before). With {@link DsDq#ring} off, per chunk of the batch
 * ({@link DsDq#chunkBatches}), GRAD_KV_DS (dk;dv, and every tile's dS into a transient buffer) and DQ_DS.
 */
final class AttentionBackwardLowerer implements KernelLowerer {
    @Override
    public void lower(Kernel kernel, LoweringContext cx) {
        Node n = kernel.node();
        Op op = n.op();
        if (op == Op.ATTENTION_GRAD_Q) {
            Kernel kv = DsDq.partner(kernel, cx);
            if (kv != null && cx.deferredDq.putIfAbsent(kv.name(), kernel) == null) {
                return; // grad_kv's launches write dq
            }
        }
        View q0 = rows(cx.in(kernel, 0), cx);
        View k0 = rows(cx.in(kernel, 1), cx);
        int maskAt = op == Op.ATTENTION_LSE ? 2 : 6;
        View mask = kernel.inputs().size() > maskAt ? maskView(cx.in(kernel, maskAt), q0, k0, cx) : null;
        View out = cx.out(kernel);
        View q = q0;
        View k = k0;
        int b = q.shape().dim(0);
        int h = q.shape().dim(1);
        int hk = k.shape().dim(1);
        int s = q.shape().dim(2);
        int t = k.shape().dim(2);
        int d = q.shape().dim(3);
        if (hk == 0 || h % hk != 0) {
            throw new CodegenException(op.text() + ": " + h + " query heads over " + hk + " K/V heads (h % hk must be 0)");
        }
        boolean causal = n.attrs().getBool("causal", false);
        double scale = n.attrs().getDouble("scale", 1.0);
        if (q.dtype() != k.dtype()) {
            throw new CodegenException(op.text() + " over mixed dtypes q " + q.dtype() + ", k " + k.dtype());
        }
        if (new AttentionBackwardSpec("lt_probe", AttentionBackwardSpec.Kind.GRAD_Q, b, h, h / hk, s, t, d, causal, scale, q.dtype(), false)
                .fastPath(cx.target)) {
            // the tensor-core kernels copy 16-byte chunks of rows: row starts 16-byte aligned
            q = aligned(q, cx);
            k = aligned(k, cx);
        }
        DType dt = q.dtype();
        java.util.function.Function<AttentionBackwardSpec.Kind, AttentionBackwardSpec> spec = kind -> new AttentionBackwardSpec(
                "lt_attn_bwd_" + kind.name().toLowerCase(java.util.Locale.ROOT), kind, b, h, h / hk, s, t, d, causal, scale, dt, mask != null);
        if (op == Op.ATTENTION_LSE) {
            if (out.dtype() != DType.F32) {
                throw new CodegenException("attention_lse writes f32, found " + out.dtype());
            }
            List<Step.Arg> a = new ArrayList<>(List.of(ptr(q), ptr(k), ptr(out)));
            if (mask != null) {
                a.add(ptr(mask));
            }
            a.addAll(List.of(new Step.I32(h), new Step.I32(s), new Step.I32(t)));
            strides(a, q, k);
            maskStrides(a, mask);
            cx.launch(spec.apply(AttentionBackwardSpec.Kind.LSE), a);
            return;
        }
        View v = rows(cx.in(kernel, 2), cx);
        View o = rows(cx.in(kernel, 3), cx);
        View dy = rows(cx.in(kernel, 4), cx);
        if (spec.apply(AttentionBackwardSpec.Kind.GRAD_Q).fastPath(cx.target)) {
            v = aligned(v, cx);
            dy = aligned(dy, cx);
        }
        View lse = cx.contiguous(cx.in(kernel, 5));
        for (View x : List.of(v, o, dy, out)) {
            if (x.dtype() != q.dtype()) {
                throw new CodegenException(op.text() + " over mixed dtypes: q " + q.dtype() + ", found " + x.dtype() + " " + x.shape());
            }
        }
        if (lse.dtype() != DType.F32) {
            throw new CodegenException(op.text() + " reads lse as f32, found " + lse.dtype());
        }
        if (v.shape().dim(3) != d || o.shape().dim(3) != d) {
            throw new CodegenException(op.text() + " on CUDA needs v's head dim equal to q's and k's (" + d + "), found " + v.shape());
        }
        Kernel gradQ = op == Op.ATTENTION_GRAD_KV ? cx.deferredDq.remove(kernel.name()) : null;
        if (gradQ != null) {
            viaDs(gradQ, q, k, v, o, dy, lse, out, spec, cx);
            return;
        }
        Buf delta = delta(o, dy, spec.apply(AttentionBackwardSpec.Kind.DELTA), cx);
        List<Step.Arg> a = new ArrayList<>(List.of(ptr(q), ptr(k), ptr(v), ptr(dy), ptr(lse), new Step.Ptr(delta, (long) b * h * s * 4)));
        if (mask != null) {
            a.add(ptr(mask));
        }
        a.add(ptr(out));
        a.addAll(List.of(new Step.I32(h), new Step.I32(s), new Step.I32(t)));
        strides(a, q, k, v, dy);
        maskStrides(a, mask);
        cx.launch(spec.apply(op == Op.ATTENTION_GRAD_Q ? AttentionBackwardSpec.Kind.GRAD_Q : AttentionBackwardSpec.Kind.GRAD_KV), a);
    }

    /**
     * DELTA, then GRAD_KV_DQ (or per chunk of the batch GRAD_KV_DS and DQ_DS): dk;dv into {@code out},
     * and {@code gradQ}'s dq.
     */
    private static void viaDs(Kernel gradQ, View q, View k, View v, View o, View dy, View lse, View out,
                              java.util.function.Function<AttentionBackwardSpec.Kind, AttentionBackwardSpec> spec, LoweringContext cx) {
        View dq = cx.out(gradQ);
        if (dq.dtype() != q.dtype() || !dq.shape().equals(q.shape())) {
            throw new CodegenException("attention_grad_q writes " + q.dtype() + q.shape() + ", found " + dq.dtype() + dq.shape());
        }
        AttentionBackwardSpec full = spec.apply(AttentionBackwardSpec.Kind.GRAD_KV_DS);
        int b = (int) full.batch();
        int h = (int) full.heads();
        int hk = (int) full.kvHeads();
        int s = (int) full.seqQ();
        int t = (int) full.seqK();
        int d = full.headDim();
        long rowBytes = (long) h * s * 4;  // one batch's delta (and lse) rows
        Buf delta = delta(o, dy, spec.apply(AttentionBackwardSpec.Kind.DELTA), cx);
        long plane = (long) b * hk * t * d;  // out [2, b, hk, t, d]: dk's plane, then dv's
        if (DsDq.ring()) {
            ring(spec.apply(AttentionBackwardSpec.Kind.GRAD_KV_DQ), gradKvArgs(q, k, v, dy, lse, new Step.Ptr(delta, b * rowBytes), ptr(out),
                    h, s, t), delta, plane, dq, cx);
            return;
        }
        int bc = DsDq.chunkBatches(b, h, s, t, full.causal());
        long tileBytes = (long) h * AttentionBackwardSpec.dsTilesPerHead(s, t, full.causal()) * AttentionBackwardSpec.DS_TILE_BYTES;
        Buf tiles = cx.transientBuf(bc * tileBytes);
        long esz = q.dtype().bytes();
        for (int b0 = 0; b0 < b; b0 += bc) {
            int nb = Math.min(bc, b - b0);
            AttentionBackwardSpec kvs = new AttentionBackwardSpec(full.name(), AttentionBackwardSpec.Kind.GRAD_KV_DS, nb, h, full.group(), s, t, d,
                    full.causal(), full.scale(), full.dtype(), false);
            AttentionBackwardSpec dqs = new AttentionBackwardSpec("lt_attn_bwd_dq_ds", AttentionBackwardSpec.Kind.DQ_DS, nb, h, full.group(), s, t,
                    d, full.causal(), full.scale(), full.dtype(), false);
            View kc = batches(k, b0, nb);
            Step.Ptr dsPtr = new Step.Ptr(tiles, nb * tileBytes);
            List<Step.Arg> a = gradKvArgs(batches(q, b0, nb), kc, batches(v, b0, nb), batches(dy, b0, nb), batches(lse, b0, nb),
                    new Step.Ptr(delta, nb * rowBytes, b0 * rowBytes),
                    new Step.Ptr(out.buf(), (plane + (long) nb * hk * t * d) * esz, (out.offset() + (long) b0 * hk * t * d) * esz), h, s, t);
            a.add(dsPtr);
            a.add(new Step.I64(plane));
            cx.launch(kvs, a);
            List<Step.Arg> qa = new ArrayList<>(List.of(ptr(kc), dsPtr, ptr(batches(dq, b0, nb)), new Step.I32(h), new Step.I32(s), new Step.I32(t)));
            strides(qa, kc);
            cx.launch(dqs, qa);
        }
    }

    /**
     * GRAD_KV_DQ: grad_kv's and dq's CTAs in one launch, the dS tiles through a ring of slots; {@code a}
     * holds grad_kv's arguments up to its strides. Its flags are zeroed by a launch just before (an
     * elementwise constant, its one input delta's first value broadcast and unused).
     */
    private static void ring(AttentionBackwardSpec rs, List<Step.Arg> a, Buf delta, long plane, View dq, LoweringContext cx) {
        long flags = rs.ringFlags();
        Buf sync = cx.transientBuf(flags * 4);
        cx.launch(new ElementwiseSpec("lt_attn_bwd_sync_zero", List.of(flags), List.of(new ElementwiseSpec.Operand(DType.F32, List.of(0L))),
                List.of(ElementwiseSpec.Step.literal(0)), DType.F32),  // f32 zeros: the ints' zero bits
                List.of(new Step.Ptr(delta, 4), new Step.Ptr(sync, flags * 4), new Step.I64(flags)));
        long ringBytes = rs.ringBytes(cx.target);
        a.add(new Step.Ptr(cx.transientBuf(ringBytes), ringBytes));
        a.add(new Step.I64(plane));
        a.add(ptr(dq));
        a.add(new Step.Ptr(sync, flags * 4));
        cx.launch(rs, a);
    }

    /**
     * grad_kv's arguments up to its strides (GRAD_KV_DS's and GRAD_KV_DQ's first ones): q, k, v, dy, lse,
     * delta, out, heads, seq_q, seq_k, then the (b, h, s) strides of q, k, v and dy.
     */
    private static List<Step.Arg> gradKvArgs(View q, View k, View v, View dy, View lse, Step.Ptr delta, Step.Ptr out, int h, int s, int t) {
        List<Step.Arg> a = new ArrayList<>(List.of(ptr(q), ptr(k), ptr(v), ptr(dy), ptr(lse), delta, out,
                new Step.I32(h), new Step.I32(s), new Step.I32(t)));
        strides(a, q, k, v, dy);
        return a;
    }

    /**
     * delta = rowsum(dy∘o) into a transient f32 buffer [b, h, s]: one DELTA launch for every gradient
     * kernel of the same (o, dy), the buffer living from the first launch to the last that reads it.
     */
    private static Buf delta(View o, View dy, AttentionBackwardSpec ds, LoweringContext cx) {
        String deltaKey = key(o) + "|" + key(dy);
        Buf delta = cx.deltas.get(deltaKey);
        if (delta != null) {
            return delta;
        }
        long bytes = ds.batch() * ds.heads() * ds.seqQ() * 4;
        delta = cx.transientBuf(bytes);
        View od = ds.vectorDelta() ? aligned(o, cx) : o; // 16-byte loads of each row
        View gd = ds.vectorDelta() ? aligned(dy, cx) : dy;
        List<Step.Arg> da = new ArrayList<>(List.of(ptr(od), ptr(gd), new Step.Ptr(delta, bytes),
                new Step.I32((int) ds.heads()), new Step.I32((int) ds.seqQ()), new Step.I32((int) ds.seqK())));
        strides(da, od, gd);
        cx.launch(ds, da);
        cx.deltas.put(deltaKey, delta);
        return delta;
    }

    /** Batches b0 .. b0 + nb of a view whose axis 0 is the batch. */
    private static View batches(View v, int b0, int nb) {
        int[] dims = v.shape().dims().clone();
        dims[0] = nb;
        return new View(v.buf(), v.dtype(), dev.lantern.ir.Shape.of(dims), v.strides(), v.offset() + b0 * v.strides()[0]);
    }

    /** What identifies the bytes a view reads: its buffer, offset, strides, shape and dtype. */
    private static String key(View v) {
        return v.buf().kind() + ":" + v.buf().name() + "@" + v.offset() + java.util.Arrays.toString(v.strides()) + v.shape() + v.dtype();
    }

    /** {@code v} with head_dim contiguous: itself, or a dense copy. */
    private static View rows(View v, LoweringContext cx) {
        return v.strides()[3] == 1 ? v : cx.contiguous(v);
    }

    /** {@code v} with every (b, h, s) stride and its offset a multiple of 8 elements: itself, or a dense copy. */
    private static View aligned(View v, LoweringContext cx) {
        boolean ok = v.offset() % 8 == 0;
        for (int i = 0; i < 3; i++) {
            ok &= v.shape().dim(i) == 1 || v.strides()[i] % 8 == 0;
        }
        return ok ? v : cx.contiguous(v);
    }

    private static void strides(List<Step.Arg> a, View... views) {
        for (View v : views) {
            for (int i = 0; i < 3; i++) {
                a.add(new Step.I64(v.shape().dim(i) == 1 ? 0 : v.strides()[i]));
            }
        }
    }

    private static void maskStrides(List<Step.Arg> a, View mask) {
        if (mask != null) {
            strides(a, mask); // a broadcast axis reads its one row whatever the stride
        }
    }

    /** The additive mask as the kernels read it: q's dtype, one value per key, keys contiguous. */
    private static View maskView(View m, View q, View k, LoweringContext cx) {
        if (m.dtype() != q.dtype() || m.shape().rank() != 4 || m.shape().dim(3) != k.shape().dim(2)) {
            throw new CodegenException("attention's mask must be " + q.dtype() + " with one value per key (…, "
                    + k.shape().dim(2) + "), got " + m.dtype() + m.shape());
        }
        return m.strides()[3] == 1 ? m : cx.contiguous(m);
    }
}
