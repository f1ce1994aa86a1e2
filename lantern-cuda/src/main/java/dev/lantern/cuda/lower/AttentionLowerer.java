package dev.lantern.cuda.lower;

import static dev.lantern.cuda.lower.LoweringContext.ptr;

import dev.lantern.cuda.codegen.AttentionSpec;
import dev.lantern.cuda.codegen.CodegenException;
import dev.lantern.ir.DType;
import dev.lantern.ir.Node;
import dev.lantern.ir.Shape;
import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.Operand;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * attention: the fused kernel with q/k/v/o strides ({@code out_perm} becomes o's strides). k and
 * v may have fewer heads than q (grouped-query attention): the spec's group makes query head h
 * read K/V head h / group through k's and v's own strides, so no per-head copy is made. A 4th
 * input is the additive mask (the spec's {@code masked}), read through its (b, h, s) strides, 0
 * on its broadcast axes.
 * {@code rope=true}: when the target's own attention tile can rotate q and k itself (Hopper, two
 * consumer warpgroups and TMA: {@link AttentionSpec#ropeFusable}; not the default tile) the kernel
 * reads them unrotated, in place; otherwise k is first roped into the kernel's planned scratch,
 * and q too unless the tile rotates q alone (any warp-specialised TMA tile, the H200 default, and
 * the options' {@code queryRopeInAttention}: the kernel reads q unrotated, in place).
 * A side output {@code lse} (a training step's attention_lse, {@code SavedLse}) is written by the
 * same kernel from its softmax's row max and sum ({@link AttentionSpec#lse}).
 */
final class AttentionLowerer implements KernelLowerer {
    @Override
    public void lower(Kernel kernel, LoweringContext cx) {
        Node n = kernel.node();
        View q = cx.in(kernel, 0);
        View k = cx.in(kernel, 1);
        View v = cx.in(kernel, 2);
        View o = cx.out(kernel);
        Shape qs = q.shape();
        int d = qs.dim(3);
        AttentionSpec spec = new AttentionSpec("lt_attention", qs.dim(0), qs.dim(1), qs.dim(2), k.shape().dim(2), d,
                n.attrs().getBool("causal", false), n.attrs().getDouble("scale", 1.0 / Math.sqrt(d)), q.dtype())
                .withGroup(Math.toIntExact(qs.dim(1) / k.shape().dim(1))); // grouped-query: K/V head h / group, read in place
        if (n.attrs().getBool("rope", false)) {
            double base = n.attrs().getDouble("rope_base", 10000.0);
            // inside the kernel only when the session's own tile rotates (not the default: there the rotation
            // of each K tile costs about what the two rope kernels do, docs/perf-notes.md "RoPE inside")
            boolean inPlace = q.strides()[3] == 1 && k.strides()[3] == 1 && q.dtype() == k.dtype();
            if (inPlace && spec.withRope(base).ropeFusable(cx.target)) {
                spec = spec.withRope(base); // the attention kernel rotates q and k as they arrive: no rope kernels
            } else {
                // q inside the kernel where its tile can (each CTA rotates its own Q tile once, so
                // this costs less than a rope kernel's pass over q), k by a rope kernel: every CTA of
                // a head reads each K tile, so rotating K inside would repeat the work per query block
                boolean queryInside = inPlace && cx.model.options().choices().queryRopeInAttention()
                        && spec.withQueryRope(base).ropeFusable(cx.target);
                if (queryInside) {
                    spec = spec.withQueryRope(base);
                }
                Map<String, Operand> ws = new HashMap<>();
                kernel.workspace().forEach(w -> ws.put(w.role(), w));
                Operand qw = ws.get("q_rope");
                Operand kw = ws.get("k_rope");
                // the planned scratch holds the roped q and k; the not-yet-written output is the
                // staging buffer of the (b, h, s, d) copies, so no transient memory is needed
                boolean planned = qw != null && kw != null && qw.dtype() == q.dtype() && kw.dtype() == k.dtype()
                        && o.dtype() == q.dtype() && o.shape().numel() >= qs.numel() && o.shape().numel() >= k.shape().numel();
                if (!queryInside) {
                    q = planned ? RopeLowerer.ropedInto(cx, q, base, o.buf(), LoweringContext.workspace(qw)) : RopeLowerer.roped(cx, q, base);
                }
                k = planned ? RopeLowerer.ropedInto(cx, k, base, o.buf(), LoweringContext.workspace(kw)) : RopeLowerer.roped(cx, k, base);
            }
        }
        if (q.dtype() != k.dtype() || q.dtype() != v.dtype() || q.dtype() != o.dtype()) {
            throw new CodegenException("attention over mixed dtypes " + q.dtype() + "/" + k.dtype() + "/" + v.dtype() + " -> " + o.dtype());
        }
        // o's strides over the logical (b, h, s, d): out dim i holds logical dim perm[i]
        long[] os = o.shape().contiguousStrides();
        long[] ol = os.clone();
        int[] perm = n.attrs().getInts("out_perm");
        if (perm != null) {
            for (int i = 0; i < perm.length; i++) {
                ol[perm[i]] = os[i];
            }
        }
        if (q.strides()[3] != 1 || k.strides()[3] != 1 || v.strides()[3] != 1 || ol[3] != 1) {
            q = cx.contiguous(q);
            k = cx.contiguous(k);
            v = cx.contiguous(v);
        }
        List<Step.Arg> a = new ArrayList<>(List.of(ptr(q), ptr(k), ptr(v), ptr(o),
                new Step.I32(qs.dim(1)), new Step.I32(qs.dim(2)), new Step.I32(k.shape().dim(2))));
        for (long[] s : List.of(q.strides(), k.strides(), v.strides(), ol)) {
            a.add(new Step.I64(s[0]));
            a.add(new Step.I64(s[1]));
            a.add(new Step.I64(s[2]));
        }
        if (kernel.inputs().size() > 3) {
            View m = maskView(cx.in(kernel, 3), q, k, cx);
            spec = spec.withMask();
            a.add(ptr(m));
            for (int i = 0; i < 3; i++) { // a broadcast axis reads its one row whatever the stride
                a.add(new Step.I64(m.shape().dim(i) == 1 ? 0 : m.strides()[i]));
            }
        }
        View lse = LoweringContext.sideOut(kernel, "lse");
        if (lse != null) { // a training step's attention_lse, written here instead of by its own kernel
            if (lse.dtype() != DType.F32 || lse.shape().numel() != qs.dim(0) * (long) qs.dim(1) * qs.dim(2)) {
                throw new CodegenException("attention's saved lse must be f32 (b, h, s) = " + qs.dim(0) + "x" + qs.dim(1) + "x"
                        + qs.dim(2) + ", got " + lse.dtype() + lse.shape());
            }
            spec = spec.withLse();
            a.add(ptr(lse));
        }
        cx.launch(spec, a);
    }

    /** The additive mask as the kernel reads it: q's dtype, one value per key, keys contiguous. */
    private static View maskView(View m, View q, View k, LoweringContext cx) {
        if (m.dtype() != q.dtype() || m.shape().rank() != 4 || m.shape().dim(3) != k.shape().dim(2)) {
            throw new CodegenException("attention's mask must be " + q.dtype() + " with one value per key (…, "
                    + k.shape().dim(2) + "), got " + m.dtype() + m.shape());
        }
        return m.strides()[3] == 1 ? m : cx.contiguous(m);
    }
}
