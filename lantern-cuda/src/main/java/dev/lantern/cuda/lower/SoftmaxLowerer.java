package dev.lantern.cuda.lower;

import static dev.lantern.cuda.lower.LoweringContext.ptr;

import dev.lantern.cuda.codegen.SoftmaxSpec;
import dev.lantern.ir.Node;
import dev.lantern.ir.Shape;
import dev.lantern.kernel.Kernel;
import java.util.List;

/** softmax over the last axis (scaled, optionally causal): one row kernel over a contiguous input. */
final class SoftmaxLowerer implements KernelLowerer {
    @Override
    public void lower(Kernel k, LoweringContext cx) {
        Node n = k.node();
        View x = cx.contiguous(cx.in(k, 0));
        View o = cx.out(k);
        Shape s = x.shape();
        long rows = s.numel() / s.last();
        SoftmaxSpec spec = new SoftmaxSpec("lt_softmax", rows, s.last(), n.attrs().getDouble("scale", 1.0),
                n.attrs().getBool("causal", false), s.rank() >= 2 ? s.dim(-2) : 1, x.dtype(), o.dtype());
        cx.launch(spec, List.of(ptr(x), ptr(o), new Step.I64(rows)));
    }
}
