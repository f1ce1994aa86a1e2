package dev.lantern.cuda.lower;

import static dev.lantern.cuda.lower.LoweringContext.ptr;

import dev.lantern.cuda.codegen.RopeSpec;
import dev.lantern.ir.Node;
import dev.lantern.ir.Shape;
import dev.lantern.kernel.Kernel;
import java.util.List;

/**
 * rope: rotate-half RoPE. A standalone rope (eager; a rope fusion did not take) reads a strided
 * (b, h, s, d) input with head_dim contiguous (q or k, a free permute of a projection's output) in
 * place, as the attention's own ropes do, instead of copying it contiguous first. The helpers
 * serve {@link AttentionLowerer}'s ropes as well.
 */
final class RopeLowerer implements KernelLowerer {
    @Override
    public void lower(Kernel k, LoweringContext cx) {
        Node n = k.node();
        boolean inverse = n.attrs().getBool("inverse", false); // the backward's rope (autodiff): rotation by -angle
        View x = cx.in(k, 0);
        View o = cx.out(k);
        double base = n.attrs().getDouble("base", 10000.0);
        long offset = n.attrs().getLong("offset", 0);
        long[] st = x.strides();
        if (!x.denseStrides() && x.shape().rank() == 4 && st[3] == 1) {
            Shape s = x.shape();
            long rows = s.numel() / s.dim(3);
            RopeSpec spec = new RopeSpec("lt_rope", rows, s.dim(2), s.dim(3), base, offset, false, x.dtype(), o.dtype(),
                    new RopeSpec.InputLayout(s.dim(1), st[0], st[1], st[2]));
            cx.launch(inverse ? spec.inverted() : spec, List.of(ptr(x), ptr(o.buf()), new Step.I64(rows)));
            return;
        }
        // dense strides read in place wherever the view starts (a slice of the flash backward's dk;dv, SliceAlias)
        ropeInto(cx, x.denseStrides() ? x : cx.contiguous(x), o, base, offset, inverse);
    }

    /** Rotate-half RoPE of {@code x} into {@code dst}, through a (b, h, s, d) copy in {@code staging} when x is strided. */
    static View ropedInto(LoweringContext cx, View x, double base, Buf staging, View dst) {
        long[] st = x.strides();
        if (!x.contiguous() && x.shape().rank() == 4 && st[3] == 1) {
            // a strided (b, h, s, d) view (q or k inside the fused QKV output): the rope reads it in place
            Shape s = x.shape();
            RopeSpec spec = new RopeSpec("lt_rope", s.numel() / s.dim(3), s.dim(2), (int) s.dim(3), base, 0, false,
                    x.dtype(), dst.dtype(), new RopeSpec.InputLayout(s.dim(1), st[0], st[1], st[2]));
            cx.launch(spec, List.of(ptr(x), ptr(dst), new Step.I64(s.numel() / s.dim(3))));
            return dst;
        }
        View src = x;
        if (!x.contiguous()) {
            src = View.dense(staging, x.dtype(), x.shape());
            cx.materialiseInto(x, src);
        }
        ropeInto(cx, src, dst, base, 0, false);
        return dst;
    }

    /**
     * Rotate-half RoPE of a (b, h, s, d) value into a fresh contiguous transient buffer (the
     * contiguous copy it may need is dead once roped: the planner gives its bytes to the next).
     */
    static View roped(LoweringContext cx, View x, double base) {
        Shape s = x.shape();
        View dst = View.dense(cx.transientBuf(s.numel() * x.dtype().bytes()), x.dtype(), s);
        ropeInto(cx, cx.contiguous(x), dst, base, 0, false);
        return dst;
    }

    static void ropeInto(LoweringContext cx, View src, View dst, double base, long offset, boolean inverse) {
        Shape s = src.shape();
        int d = s.last();
        long seq = s.rank() >= 2 ? s.dim(-2) : 1;
        long rows = s.numel() / d;
        RopeSpec spec = new RopeSpec("lt_rope", rows, seq, d, base, offset, false, src.dtype(), dst.dtype());
        cx.launch(inverse ? spec.inverted() : spec, List.of(ptr(src), ptr(dst), new Step.I64(rows)));
    }
}
