package dev.lantern.cuda.lower;

import static dev.lantern.cuda.lower.LoweringContext.ptr;

import dev.lantern.cuda.codegen.NormWeightGradSpec;
import dev.lantern.ir.Shape;
import dev.lantern.kernel.Kernel;
import java.util.List;

/**
 * norm_weight_grad (fuse-norm's form of a norm's weight gradient): the PARTIAL stage into a transient
 * buffer of per-chunk column sums, then the FINISH stage into dw ({@link NormWeightGradSpec}). x and
 * dy are read contiguous (a strided operand is copied first, as the row kernels' are).
 */
final class NormWeightGradLowerer implements KernelLowerer {
    @Override
    public void lower(Kernel k, LoweringContext cx) {
        View x = cx.contiguous(cx.in(k, 0));
        View dy = cx.contiguous(cx.in(k, 1));
        View o = cx.out(k);
        Shape s = x.shape();
        long cols = s.last();
        long rows = s.numel() / cols;
        NormWeightGradSpec.Kind kind = k.node().attrs().getString("kind", "rms").equals("layer")
                ? NormWeightGradSpec.Kind.LAYER : NormWeightGradSpec.Kind.RMS;
        double eps = k.node().attrs().getDouble("eps", 1e-6);
        NormWeightGradSpec partial = new NormWeightGradSpec("lt_norm_dw", NormWeightGradSpec.Stage.PARTIAL, kind, rows, cols, eps,
                x.dtype(), dy.dtype(), o.dtype());
        long bytes = partial.workspaceBytes();
        Buf ws = cx.transientBuf(bytes);
        cx.launch(partial, List.of(ptr(x), ptr(dy), new Step.Ptr(ws, bytes), new Step.I64(rows)));
        NormWeightGradSpec finish = new NormWeightGradSpec("lt_norm_dw", NormWeightGradSpec.Stage.FINISH, kind, rows, cols, eps,
                x.dtype(), dy.dtype(), o.dtype());
        cx.launch(finish, List.of(new Step.Ptr(ws, bytes), ptr(o), new Step.I64(cols)));
    }
}
