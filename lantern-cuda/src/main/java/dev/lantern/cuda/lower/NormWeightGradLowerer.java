package dev.lantern.cuda.lower;

import static dev.lantern.cuda.lower.LoweringContext.ptr;

import dev.lantern.cuda.codegen.NormBackwardSpec;
import dev.lantern.cuda.codegen.NormWeightGradSpec;
import dev.lantern.ir.Op;
import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.Operand;
import java.util.List;

/**
 * norm_weight_grad (fuse-norm's form of a norm's weight gradient): the PARTIAL stage into a transient
 * buffer of per-chunk column sums, then the FINISH stage into dw ({@link NormWeightGradSpec}). x and
 * dy are read contiguous (a strided operand is copied first, as the row kernels' are).
 *
 * <p>Autodiff puts a norm's weight gradient just before its dx. When the dx kernel that follows
 * reads the same x and dy ({@link #partner}), this kernel is deferred to it: that kernel writes the
 * partials as it computes dx ({@link NormBackwardSpec}), then FINISH runs ({@link #finish}), one
 * read of x and dy instead of two.
 */
final class NormWeightGradLowerer implements KernelLowerer {
    @Override
    public void lower(Kernel k, LoweringContext cx) {
        Kernel dx = partner(k, cx);
        if (dx != null && cx.deferredWeightGrads.putIfAbsent(dx.name(), k) == null) {
            return;
        }
        View x = cx.contiguous(cx.in(k, 0));
        View dy = cx.contiguous(cx.in(k, 1));
        NormWeightGradSpec partial = stage(k, cx, NormWeightGradSpec.Stage.PARTIAL);
        long bytes = partial.workspaceBytes();
        Buf ws = cx.transientBuf(bytes);
        cx.launch(partial, List.of(ptr(x), ptr(dy), new Step.Ptr(ws, bytes), new Step.I64(partial.rows())));
        finish(k, ws, cx);
    }

    /** The FINISH stage of {@code k}: the partials in {@code ws} summed into its output. */
    static void finish(Kernel k, Buf ws, LoweringContext cx) {
        NormWeightGradSpec finish = stage(k, cx, NormWeightGradSpec.Stage.FINISH);
        long bytes = finish.workspaceBytes();
        cx.launch(finish, List.of(new Step.Ptr(ws, bytes), ptr(cx.out(k)), new Step.I64(finish.cols())));
    }

    private static NormWeightGradSpec stage(Kernel k, LoweringContext cx, NormWeightGradSpec.Stage stage) {
        View x = cx.in(k, 0);
        long cols = x.shape().last();
        return new NormWeightGradSpec("lt_norm_dw", stage, kind(k), x.shape().numel() / cols, cols, eps(k), x.dtype(),
                cx.in(k, 1).dtype(), cx.out(k).dtype());
    }

    static NormWeightGradSpec.Kind kind(Kernel k) {
        return k.node().attrs().getString("kind", "rms").equals("layer") ? NormWeightGradSpec.Kind.LAYER : NormWeightGradSpec.Kind.RMS;
    }

    private static double eps(Kernel k) {
        return k.node().attrs().getDouble("eps", 1e-6);
    }

    /**
     * The rms_norm_grad or layer_norm_grad kernel after {@code dw} that reads the same x and dy
     * (same storage and strides, rows at most {@link NormBackwardSpec#MAX_COLS} wide) with the same
     * kind and eps, when deferring dw's write to it is safe, else null. Safe: no kernel in between
     * reads dw, and dw is read after that kernel or is a graph output, so its buffer is still dw's
     * own when it is written. x and dy are inputs of both kernels, intact in between. The system
     * property {@code lantern.norm.backward.fused=false} keeps the two kernels (for A/B timing).
     */
    static Kernel partner(Kernel dw, LoweringContext cx) {
        if ("false".equals(System.getProperty("lantern.norm.backward.fused"))) {
            return null;
        }
        Operand x = dw.inputs().get(0);
        Operand dy = dw.inputs().get(1);
        if (x.shape().rank() < 1 || x.shape().last() > NormBackwardSpec.MAX_COLS) {
            return null;
        }
        return DeferredWrite.partner(dw, cx, k -> isNormGradOf(k, dw, x, dy));
    }

    private static boolean isNormGradOf(Kernel k, Kernel dw, Operand x, Operand dy) {
        Op op = k.node().op();
        if (op != Op.RMS_NORM_GRAD && op != Op.LAYER_NORM_GRAD) {
            return false;
        }
        boolean layer = op == Op.LAYER_NORM_GRAD;
        return layer == (kind(dw) == NormWeightGradSpec.Kind.LAYER)
                && k.node().attrs().getDouble("eps", layer ? 1e-5 : 1e-6) == eps(dw)
                && DeferredWrite.same(k.inputs().get(0), x) && DeferredWrite.same(k.inputs().get(2), dy);
    }
}
