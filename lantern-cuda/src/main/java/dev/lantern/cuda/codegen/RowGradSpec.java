package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

/**
 * The backward row kernels of autodiff over the last axis of a (rows, cols) tensor, f32 math:
 *
 * <pre>
 * SOFTMAX:    dx = scale * y * (dy - sum_row(y * dy))                       args: y, dy, out, rows
 * RMS_NORM:   dx = r * (g - xh * mean_row(g * xh)),           g = w * dy      args: x, w, dy[, res], out, rows
 * LAYER_NORM: dx = r * (g - mean_row(g) - xh * mean_row(g * xh))
 *             xh = (x - mean) * r (mean = 0 for rms), r = 1 / sqrt(var + eps), recomputed from x
 * residual:   out = dx + res, summed in f32 and rounded once (res of out's dtype; norms only)
 * </pre>
 *
 * One CTA per row; every row sum is a fixed tree (per-thread strided partials, then
 * {@code lt_block_sum}), so the result does not depend on scheduling: strict mode may run it.
 *
 * @param param the softmax's scale, or the norm's eps
 * @param weightDtype the norm weight's dtype (ignored for SOFTMAX)
 * @param residual whether a norm's dx is summed with a residual operand {@code res} where it is stored
 */
public record RowGradSpec(String name, Kind kind, long rows, long cols, double param, DType inDtype, DType weightDtype,
                          DType outDtype, boolean residual) implements KernelSpec {
    public enum Kind { SOFTMAX, RMS_NORM, LAYER_NORM }

    /** Without a residual operand. */
    public RowGradSpec(String name, Kind kind, long rows, long cols, double param, DType inDtype, DType weightDtype, DType outDtype) {
        this(name, kind, rows, cols, param, inDtype, weightDtype, outDtype, false);
    }

    public RowGradSpec {
        KernelSpec.checkName(name);
        if (residual && kind == Kind.SOFTMAX) {
            throw new CodegenException(name + ": softmax_grad has no residual form");
        }
        KernelSpec.checkPositive(rows, name + ": rows");
        KernelSpec.checkPositive(cols, name + ": cols");
        if (!Double.isFinite(param) || (kind != Kind.SOFTMAX && param < 0)) {
            throw new CodegenException(name + ": " + (kind == Kind.SOFTMAX ? "scale" : "eps") + " must be finite"
                    + (kind == Kind.SOFTMAX ? "" : " and >= 0") + ", got " + param);
        }
    }

    @Override
    public CudaKernelSource render(CudaTarget target) {
        return new RowGradRenderer(this, target).render();
    }

    /** Threads of a row CTA: the row's width rounded up to whole warps, at most 256. */
    static int threads(long cols) {
        return (int) Math.min(256, (cols + 31) / 32 * 32);
    }
}
