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
 * @param residual2 a second such view added after {@code residual} (or null; only with {@code residual}):
 *                 a pre-norm block's {@code down(...) + x + attn} when the norm kept x + attn unwritten
 */
public record GemmEpilogue(float alpha, View bias, UnaryFn act, View residual, View residual2) {
    public static final GemmEpilogue NONE = new GemmEpilogue(1f, null, UnaryFn.IDENTITY, null, null);

    public GemmEpilogue {
        if (act == null) {
            act = UnaryFn.IDENTITY;
        }
        if (bias != null && bias.rank() != 1) {
            throw new IllegalArgumentException("GEMM bias must be a vector (N), found " + bias);
        }
        if (residual2 != null && residual == null) {
            throw new IllegalArgumentException("a second GEMM residual needs a first one");
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
        return new GemmEpilogue(a, bias, act, residual, residual2);
    }

    public GemmEpilogue withBias(View b) {
        return new GemmEpilogue(alpha, b, act, residual, residual2);
    }

    public GemmEpilogue withAct(UnaryFn f) {
        return new GemmEpilogue(alpha, bias, f, residual, residual2);
    }

    public GemmEpilogue withResidual(View r) {
        return new GemmEpilogue(alpha, bias, act, r, residual2);
    }

    /** This epilogue adding {@code r} after the residual (which must be set): out = act(...) + residual + r. */
    public GemmEpilogue withResidual2(View r) {
        return new GemmEpilogue(alpha, bias, act, residual, r);
    }

    /** Whether the store needs anything beyond copying the accumulator out. */
    public boolean isIdentity() {
        return alpha == 1f && bias == null && act == UnaryFn.IDENTITY && residual == null && residual2 == null;
    }

    /**
     * out[0..n) = act(alpha·acc[ao..ao+n) + bias[col..col+n)) + res[0..n) + res2[0..n); biasF is the
     * whole bias in f32 (or null), res and res2 the residual slices already loaded (or null). Without an activation, or
     * with GELU_TANH (the MLP's), one vector pass over the L1-resident row; any other activation in
     * three passes, each a loop that C2 fully inlines (see {@link UnaryFn}'s note). The operations
     * and their order are the same either way, so the result does not depend on the path.
     */
    void apply(float[] acc, int ao, int n, float[] biasF, int col, float[] res, float[] res2, float[] out) {
        var F = CpuConfig.F;
        int v = CpuConfig.vectorBound(n);
        boolean fused = act == UnaryFn.IDENTITY || act == UnaryFn.GELU_TANH;
        boolean gelu = act == UnaryFn.GELU_TANH;
        for (int i = 0; i < v; i += F.length()) {
            var x = jdk.incubator.vector.FloatVector.fromArray(F, acc, ao + i).mul(alpha);
            if (biasF != null) {
                x = x.add(jdk.incubator.vector.FloatVector.fromArray(F, biasF, col + i));
            }
            if (fused) {
                if (gelu) {
                    x = UnaryFn.geluTanh(x);
                }
                if (res != null) {
                    x = x.add(jdk.incubator.vector.FloatVector.fromArray(F, res, i));
                }
                if (res2 != null) {
                    x = x.add(jdk.incubator.vector.FloatVector.fromArray(F, res2, i));
                }
            }
            x.intoArray(out, i);
        }
        for (int i = v; i < n; i++) {
            float x = acc[ao + i] * alpha + (biasF == null ? 0f : biasF[col + i]);
            if (fused) {
                x = gelu ? UnaryFn.geluTanh(x) : x;
                x = res != null ? x + res[i] : x;
                x = res2 != null ? x + res2[i] : x;
            }
            out[i] = x;
        }
        if (!fused) {
            act.apply(out, out, n);
            if (res != null) {
                BinaryFn.ADD.apply(out, res, out, n);
            }
            if (res2 != null) {
                BinaryFn.ADD.apply(out, res2, out, n);
            }
        }
    }
}
