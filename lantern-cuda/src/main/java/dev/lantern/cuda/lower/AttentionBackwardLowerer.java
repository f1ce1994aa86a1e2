package dev.lantern.cuda.lower;

import static dev.lantern.cuda.lower.LoweringContext.ptr;

import dev.lantern.cuda.codegen.AttentionBackwardSpec;
import dev.lantern.cuda.codegen.CodegenException;
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
 */
final class AttentionBackwardLowerer implements KernelLowerer {
    @Override
    public void lower(Kernel kernel, LoweringContext cx) {
        Node n = kernel.node();
        Op op = n.op();
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
        // delta = rowsum(dy∘o): one pass for both gradient kernels of the same (o, dy), its transient
        // buffer living from grad_q's DELTA launch to grad_kv's launch
        String deltaKey = key(o) + "|" + key(dy);
        Buf delta = cx.deltas.get(deltaKey);
        if (delta == null) {
            delta = cx.transientBuf((long) b * h * s * 4);
            AttentionBackwardSpec ds = spec.apply(AttentionBackwardSpec.Kind.DELTA);
            View od = ds.vectorDelta() ? aligned(o, cx) : o; // 16-byte loads of each row
            View gd = ds.vectorDelta() ? aligned(dy, cx) : dy;
            List<Step.Arg> da = new ArrayList<>(List.of(ptr(od), ptr(gd), new Step.Ptr(delta, (long) b * h * s * 4),
                    new Step.I32(h), new Step.I32(s), new Step.I32(t)));
            strides(da, od, gd);
            cx.launch(ds, da);
            cx.deltas.put(deltaKey, delta);
        }
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
