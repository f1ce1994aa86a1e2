package dev.lantern.cuda.codegen;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Renders a {@link NormSpec}: one CTA per row.
 * <ul>
 *   <li>fast path (D = threads * vectors * 8 for bf16): the row lives in registers, loaded with
 *       16-byte vectors, all loads issued before the first use; mean and variance are two
 *       block reductions over the registers (one for rms), so memory is read once, and the
 *       variance is centred (no E[x^2] - E[x]^2 cancellation);</li>
 *   <li>general path (any D): a 256-thread CTA strides over the row three times (the second
 *       and third reads hit L1/L2).</li>
 * </ul>
 */
final class NormRenderer {
    private static final int GENERAL_THREADS = 256;

    private final NormSpec spec;
    private final CudaTarget target;
    private final Optional<RowTiling> tiling;
    private final String tx;
    private final String tw;
    private final String to;

    NormRenderer(NormSpec spec, CudaTarget target) {
        this.spec = spec;
        this.target = target;
        target.requireDtype(spec.inDtype(), spec.name());
        target.requireDtype(spec.weightDtype(), spec.name());
        target.requireDtype(spec.outDtype(), spec.name());
        int width = target.vectorWidth(spec.inDtype());
        // Weight and output vectors of `width` elements must be 8 or 16k bytes: true for 2- and 4-byte types.
        this.tiling = RowTiling.choose(spec.cols(), width, target);
        this.tx = CudaPrelude.cType(spec.inDtype());
        this.tw = CudaPrelude.cType(spec.weightDtype());
        this.to = CudaPrelude.cType(spec.outDtype());
    }

    CudaKernelSource render() {
        CudaEmitter e = new CudaEmitter();
        String what = (spec.kind() == NormSpec.Kind.LAYER ? "layer_norm" : "rms_norm")
                + (spec.residual() ? " with residual prologue" : "");
        CudaPrelude.emit(e, what + ", " + tiling.map(t -> "row-in-registers path").orElse("general path"));
        List<KernelParam> params = new ArrayList<>();
        params.add(new KernelParam("const " + tx + "* __restrict__", "x"));
        if (spec.residual()) {
            params.add(new KernelParam("const " + tx + "* __restrict__", "res"));
        }
        params.add(new KernelParam("const " + tw + "* __restrict__", "weight"));
        if (spec.bias()) {
            params.add(new KernelParam("const " + tw + "* __restrict__", "bias"));
        }
        params.add(new KernelParam(to + "* __restrict__", "out"));
        if (spec.residual()) {
            params.add(new KernelParam(tx + "* __restrict__", "sum_out"));
        }
        params.add(new KernelParam("long long", "rows"));
        int threads = tiling.map(RowTiling::threads).orElse(GENERAL_THREADS);
        String signature = "extern \"C\" __global__ void __launch_bounds__(" + threads + ") " + spec.name() + "("
                + String.join(", ", params.stream().map(KernelParam::toString).toList()) + ")";
        e.block(signature, () -> {
            e.linef("constexpr long long D = %dLL;", spec.cols());
            e.linef("constexpr float EPS = %s;", ElementwiseRenderer.floatLiteral(spec.eps()));
            e.linef("constexpr int THREADS = %d, WARPS = THREADS / 32;", threads);
            e.line("__shared__ float scratch[WARPS];");
            e.line("const long long row = blockIdx.x;");
            e.line("if (row >= rows) return;");
            e.line("const long long base = row * D;");
            tiling.ifPresentOrElse(t -> emitFast(e, t), () -> emitGeneral(e));
        });
        LaunchRule rule = size -> LaunchConfig.linear(Math.max(1, size.get(0)), threads, 0);
        return new CudaKernelSource(spec.name(), e.text(), params, rule, ProblemSize.of(spec.rows()),
                tiling.isPresent() ? "registers" : "general");
    }

    private void emitFast(CudaEmitter e, RowTiling t) {
        e.linef("constexpr int V = %d, K = %d;", t.width(), t.vectors());
        e.comment("the row: thread t holds vectors t, t + THREADS, ... (K of them, V elements each)");
        e.line("float h[K][V];");
        e.unrolled("k", "K", () -> e.line("lt_load<" + tx + ", V>(x + base + (threadIdx.x + k * THREADS) * V, h[k]);"));
        if (spec.residual()) {
            e.unrolled("k", "K", () -> {
                e.line("float r[V];");
                e.line("lt_load<" + tx + ", V>(res + base + (threadIdx.x + k * THREADS) * V, r);");
                e.comment("round the sum to storage type: the residual stream holds exactly what an unfused add wrote");
                e.unrolled("j", "V", () -> e.line("h[k][j] = lt_round<" + tx + ">(h[k][j] + r[j]);"));
                e.line("lt_store<" + tx + ", V>(sum_out + base + (threadIdx.x + k * THREADS) * V, h[k]);");
            });
        }
        if (spec.kind() == NormSpec.Kind.LAYER) {
            e.line("float s = 0.f;");
            e.unrolled("k", "K", () -> e.unrolled("j", "V", () -> e.line("s += h[k][j];")));
            e.line("const float mean = lt_block_sum<WARPS>(s, scratch) * (1.f / (float) D);");
            e.line("float q = 0.f;");
            e.unrolled("k", "K", () -> e.unrolled("j", "V", () -> {
                e.line("h[k][j] -= mean;");
                e.line("q = fmaf(h[k][j], h[k][j], q);");
            }));
        } else {
            e.line("float q = 0.f;");
            e.unrolled("k", "K", () -> e.unrolled("j", "V", () -> e.line("q = fmaf(h[k][j], h[k][j], q);")));
        }
        e.line("const float rstd = rsqrtf(lt_block_sum<WARPS>(q, scratch) * (1.f / (float) D) + EPS);");
        e.unrolled("k", "K", () -> {
            e.line("const long long c = (threadIdx.x + k * THREADS) * V;");
            e.line("float w[V];");
            e.line("lt_load<" + tw + ", V>(weight + c, w);");
            if (spec.bias()) {
                e.line("float b[V];");
                e.line("lt_load<" + tw + ", V>(bias + c, b);");
            }
            e.line("float y[V];");
            e.unrolled("j", "V", () -> e.line(spec.bias()
                    ? "y[j] = fmaf(h[k][j] * rstd, w[j], b[j]);"
                    : "y[j] = h[k][j] * rstd * w[j];"));
            e.line("lt_store<" + to + ", V>(out + base + c, y);");
        });
    }

    private void emitGeneral(CudaEmitter e) {
        String load = spec.residual()
                ? "lt_round<" + tx + ">(lt_f32(x[base + c]) + lt_f32(res[base + c]))"
                : "lt_f32(x[base + c])";
        e.comment("pass 1: (residual sum and) mean; passes 2 and 3 re-read the row from cache");
        e.line("float s = 0.f;");
        e.block("for (long long c = threadIdx.x; c < D; c += THREADS)", () -> {
            e.line("const float v = " + load + ";");
            if (spec.residual()) {
                e.line("sum_out[base + c] = lt_from<" + tx + ">(v);");
            }
            e.line("s += v;");
        });
        if (spec.kind() == NormSpec.Kind.LAYER) {
            e.line("const float mean = lt_block_sum<WARPS>(s, scratch) * (1.f / (float) D);");
        } else {
            e.line("(void) s;");
            e.line("const float mean = 0.f;");
        }
        e.line("float q = 0.f;");
        e.block("for (long long c = threadIdx.x; c < D; c += THREADS)", () -> {
            e.line("const float v = " + load + " - mean;");
            e.line("q = fmaf(v, v, q);");
        });
        e.line("const float rstd = rsqrtf(lt_block_sum<WARPS>(q, scratch) * (1.f / (float) D) + EPS);");
        e.block("for (long long c = threadIdx.x; c < D; c += THREADS)", () -> {
            e.line("const float v = (" + load + " - mean) * rstd * lt_f32(weight[c]);");
            e.line("out[base + c] = lt_from<" + to + ">(" + (spec.bias() ? "v + lt_f32(bias[c])" : "v") + ");");
        });
    }
}
