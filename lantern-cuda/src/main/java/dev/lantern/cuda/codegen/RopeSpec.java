package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

/**
 * Rotary position embedding over x (batch, heads, seq, head_dim), contiguous.
 *
 * <pre>
 * pos = (row % seq) + offset, theta_i = base^(-2i/d), a = pos * theta_i
 * rotate-half (default):  for i &lt; d/2:
 *     out[i]       = x[i] cos a - x[i+d/2] sin a
 *     out[i + d/2] = x[i+d/2] cos a + x[i] sin a
 * interleaved:            out[2i] = x[2i] cos a - x[2i+1] sin a; out[2i+1] = x[2i+1] cos a + x[2i] sin a
 * </pre>
 *
 * Kernel arguments: x, out, rows (= batch * heads * seq). The angles are computed in f32
 * from a table of theta_i rounded once from float64.
 *
 * @param rows        batch * heads * seq at the spec's shape
 * @param seq         sequence length (compile-time: positions are row % seq)
 * @param offset      position of the first token (a KV-cache offset)
 * @param interleaved pairs (2i, 2i+1) instead of (i, i + d/2)
 * @param input       null: x is contiguous like out; else x is a strided (b, h, s, d) view
 *                    read in place (out stays contiguous): no copy before the rope
 * @param inverse     rotate by -angle (rope's gradient: R(a)^T = R(-a))
 */
public record RopeSpec(String name, long rows, long seq, int headDim, double base, long offset, boolean interleaved,
                       DType inDtype, DType outDtype, InputLayout input, boolean inverse) implements KernelSpec {
    /**
     * Element strides of a strided (batch, heads, seq, head_dim) input with head_dim contiguous;
     * row r of the rope is (r / (heads seq), (r / seq) % heads, r % seq).
     */
    public record InputLayout(long heads, long batchStride, long headStride, long seqStride) {
        public InputLayout {
            if (heads <= 0 || batchStride < 0 || headStride < 0 || seqStride < 0) {
                throw new CodegenException("bad rope input layout " + heads + "/" + batchStride + "/" + headStride
                        + "/" + seqStride);
            }
        }

        /** Whether every row starts on a multiple of {@code elements} (for vector loads). */
        boolean aligned(int elements) {
            return batchStride % elements == 0 && headStride % elements == 0 && seqStride % elements == 0;
        }
    }

    public RopeSpec(String name, long rows, long seq, int headDim, double base, long offset, boolean interleaved,
                    DType inDtype, DType outDtype) {
        this(name, rows, seq, headDim, base, offset, interleaved, inDtype, outDtype, null, false);
    }

    /** A forward rope over an input read through {@code input}. */
    public RopeSpec(String name, long rows, long seq, int headDim, double base, long offset, boolean interleaved,
                    DType inDtype, DType outDtype, InputLayout input) {
        this(name, rows, seq, headDim, base, offset, interleaved, inDtype, outDtype, input, false);
    }

    /** This rope rotating by -angle. */
    public RopeSpec inverted() {
        return new RopeSpec(name, rows, seq, headDim, base, offset, interleaved, inDtype, outDtype, input, true);
    }

    public RopeSpec {
        KernelSpec.checkName(name);
        KernelSpec.checkPositive(rows, name + ": rows");
        KernelSpec.checkPositive(seq, name + ": seq");
        KernelSpec.checkPositive(headDim, name + ": head_dim");
        if (headDim % 2 != 0) {
            throw new CodegenException(name + ": rope needs an even head_dim, got " + headDim);
        }
        if (!(base > 0) || !Double.isFinite(base)) {
            throw new CodegenException(name + ": rope base must be finite and > 0, got " + base);
        }
        if (offset < 0) {
            throw new CodegenException(name + ": rope offset must be >= 0, got " + offset);
        }
    }

    public static RopeSpec rotateHalf(String name, long batchHeads, long seq, int headDim, double base, DType dtype) {
        return new RopeSpec(name, batchHeads * seq, seq, headDim, base, 0, false, dtype, dtype);
    }

    @Override
    public CudaKernelSource render(CudaTarget target) {
        return new RopeRenderer(this, target).render();
    }
}
