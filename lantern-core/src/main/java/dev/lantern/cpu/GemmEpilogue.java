package dev.lantern.cpu;

/**
 * What a GEMM does to its f32 accumulator tile before the store, while the tile is hot:
 * {@code out = act(alpha·acc + bias) + residual}. A composable record rather than an enum, so that
 * fusion can ask for any combination: {@code GemmEpilogue.NONE.withBias(b).withAct(UnaryFn.GELU_TANH)}.
 *
 * @param alpha    scale of the product (1 for a plain matmul; attention's 1/√d when fused)
 * @param bias     (N), broadcast over rows and batches; or null
 * @param act      activation applied after the bias (IDENTITY for none)
 * @param residual a view with C's full shape (batch..., M, N), or broadcastable to it; or null.
 *                 It may alias C (an in-place C += A·B): each row is read before it is written.
 */
public record GemmEpilogue(float alpha, View bias, UnaryFn act, View residual) {
    public static final GemmEpilogue NONE = new GemmEpilogue(1f, null, UnaryFn.IDENTITY, null);

    public GemmEpilogue {
        if (act == null) {
            act = UnaryFn.IDENTITY;
        }
        if (bias != null && bias.rank() != 1) {
            throw new IllegalArgumentException("GEMM bias must be a vector (N), found " + bias);
        }
    }

    public static GemmEpilogue bias(View bias) {
        return NONE.withBias(bias);
    }

    public static GemmEpilogue biasGelu(View bias, boolean tanh) {
        return NONE.withBias(bias).withAct(UnaryFn.gelu(tanh));
    }

    public static GemmEpilogue residual(View residual) {
        return NONE.withResidual(residual);
    }

    public GemmEpilogue withAlpha(float a) {
        return new GemmEpilogue(a, bias, act, residual);
    }

    public GemmEpilogue withBias(View b) {
        return new GemmEpilogue(alpha, b, act, residual);
    }

    public GemmEpilogue withAct(UnaryFn f) {
        return new GemmEpilogue(alpha, bias, f, residual);
    }

    public GemmEpilogue withResidual(View r) {
        return new GemmEpilogue(alpha, bias, act, r);
    }

    /** Whether the store needs anything beyond copying the accumulator out. */
    public boolean isIdentity() {
        return alpha == 1f && bias == null && act == UnaryFn.IDENTITY && residual == null;
    }

    /**
     * out[0..n) = act(alpha·acc[ao..ao+n) + bias[col..col+n)) + res[0..n); biasF is the whole bias
     * in f32 (or null), res the residual slice already loaded (or null). Vector loops, scalar tail.
     */
    void apply(float[] acc, int ao, int n, float[] biasF, int col, float[] res, float[] out) {
        int i = 0;
        var F = CpuConfig.F;
        for (int bound = CpuConfig.vectorBound(n); i < bound; i += F.length()) {
            var v = jdk.incubator.vector.FloatVector.fromArray(F, acc, ao + i);
            if (alpha != 1f) {
                v = v.mul(alpha);
            }
            if (biasF != null) {
                v = v.add(jdk.incubator.vector.FloatVector.fromArray(F, biasF, col + i));
            }
            v = act.apply(v);
            if (res != null) {
                v = v.add(jdk.incubator.vector.FloatVector.fromArray(F, res, i));
            }
            v.intoArray(out, i);
        }
        for (; i < n; i++) {
            float v = acc[ao + i] * alpha;
            if (biasF != null) {
                v += biasF[col + i];
            }
            v = act.apply(v);
            if (res != null) {
                v += res[i];
            }
            out[i] = v;
        }
    }
}
