package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

/**
 * Softmax over the last axis of a (rows, cols) tensor, f32 math, with a scale and an
 * optional causal mask.
 *
 * <pre>
 * t[j]   = x[j] * scale, or -inf where causal and j &gt; (row % seqQ)   // NOTE: scale before the mask
 * out[j] = exp(t[j] - max t) / sum exp(t - max t)
 * </pre>
 *
 * The causal mask is top-left aligned, as PyTorch's {@code is_causal}: query i sees keys 0..i.
 * Kernel arguments: x, out, rows.
 *
 * @param seqQ for causal: query rows per (batch, head) matrix, so that the query index is row % seqQ
 */
public record SoftmaxSpec(String name, long rows, long cols, double scale, boolean causal, long seqQ,
                          DType inDtype, DType outDtype) implements KernelSpec {
    public SoftmaxSpec {
        KernelSpec.checkName(name);
        KernelSpec.checkPositive(rows, name + ": rows");
        KernelSpec.checkPositive(cols, name + ": cols");
        KernelSpec.checkPositive(seqQ, name + ": seqQ");
        if (!Double.isFinite(scale)) {
            throw new CodegenException(name + ": scale must be finite, got " + scale);
        }
    }

    /** A plain softmax (scale 1, no mask). */
    public static SoftmaxSpec plain(String name, long rows, long cols, DType dtype) {
        return new SoftmaxSpec(name, rows, cols, 1.0, false, 1, dtype, dtype);
    }

    @Override
    public CudaKernelSource render(CudaTarget target) {
        return new SoftmaxRenderer(this, target).render();
    }
}
