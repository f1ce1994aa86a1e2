package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

/**
 * layer_norm or rms_norm over the last axis of a (rows, cols) tensor, with an optional
 * fused residual-add prologue and a cast epilogue.
 *
 * <pre>
 * h   = residual ? round_in(x + r) : x      // also written to sum_out when residual
 * y   = layer: (h - mean(h)) * rsqrt(var(h) + eps) * w (+ b)
 *       rms:   h * rsqrt(mean(h^2) + eps) * w
 * out = (outDtype) y
 * </pre>
 *
 * Kernel arguments, in order: x, [res], weight, [bias], out, [sum_out], rows.
 *
 * @param rows      rows at the spec's shape (a run-time argument: one compiled kernel serves any count)
 * @param cols      the normalised size D, a compile-time constant
 * @param residual  fuse {@code x + r} before the norm and write it to {@code sum_out} (dtype of x)
 * @param bias      layer_norm only: add a bias (beta) after the weight
 */
public record NormSpec(String name, Kind kind, long rows, long cols, double eps, DType inDtype, DType weightDtype,
                       DType outDtype, boolean residual, boolean bias) implements KernelSpec {

    public enum Kind { LAYER, RMS }

    public NormSpec {
        KernelSpec.checkName(name);
        KernelSpec.checkPositive(rows, name + ": rows");
        KernelSpec.checkPositive(cols, name + ": cols");
        if (!(eps >= 0) || Double.isInfinite(eps)) {
            throw new CodegenException(name + ": eps must be finite and >= 0, got " + eps);
        }
        if (bias && kind == Kind.RMS) {
            throw new CodegenException(name + ": rms_norm has no bias");
        }
    }

    public static NormSpec rms(String name, long rows, long cols, double eps, DType dtype) {
        return new NormSpec(name, Kind.RMS, rows, cols, eps, dtype, dtype, dtype, false, false);
    }

    public static NormSpec layer(String name, long rows, long cols, double eps, DType dtype, boolean bias) {
        return new NormSpec(name, Kind.LAYER, rows, cols, eps, dtype, dtype, dtype, false, bias);
    }

    public NormSpec withResidual() {
        return new NormSpec(name, kind, rows, cols, eps, inDtype, weightDtype, outDtype, true, bias);
    }

    public NormSpec withOutDtype(DType out) {
        return new NormSpec(name, kind, rows, cols, eps, inDtype, weightDtype, out, residual, bias);
    }

    @Override
    public CudaKernelSource render(CudaTarget target) {
        return new NormRenderer(this, target).render();
    }
}
