package dev.lantern.cuda.codegen;

import java.util.List;
import java.util.Optional;

/**
 * Renders a {@link SoftmaxSpec}: one CTA per row. Fast path: the row in registers (16-byte
 * loads all in flight first), max and sum as two block reductions, exp2 with the scale and
 * log2(e) folded into one multiply. General path (cols not a multiple of 256 for bf16):
 * three strided passes over the row (max, sum, write).
 */
final class SoftmaxRenderer {
    private static final int GENERAL_THREADS = 256;

    private final SoftmaxSpec spec;
    private final Optional<RowTiling> tiling;
    private final String ti;
    private final String to;

    SoftmaxRenderer(SoftmaxSpec spec, CudaTarget target) {
        this.spec = spec;
        target.requireDtype(spec.inDtype(), spec.name());
        target.requireDtype(spec.outDtype(), spec.name());
        this.tiling = RowTiling.choose(spec.cols(), target.vectorWidth(spec.inDtype()), target);
        this.ti = CudaPrelude.cType(spec.inDtype());
        this.to = CudaPrelude.cType(spec.outDtype());
    }

    CudaKernelSource render() {
        CudaEmitter e = new CudaEmitter();
        CudaPrelude.emit(e, "softmax" + (spec.causal() ? " (causal)" : "") + ", "
                + tiling.map(t -> "row-in-registers path").orElse("general path"));
        List<KernelParam> params = List.of(
                new KernelParam("const " + ti + "* __restrict__", "x"),
                new KernelParam(to + "* __restrict__", "out"),
                new KernelParam("long long", "rows"));
        int threads = tiling.map(RowTiling::threads).orElse(GENERAL_THREADS);
        String signature = "extern \"C\" __global__ void __launch_bounds__(" + threads + ") " + spec.name() + "("
                + String.join(", ", params.stream().map(KernelParam::toString).toList()) + ")";
        e.block(signature, () -> {
            e.linef("constexpr long long D = %dLL;", spec.cols());
            e.linef("constexpr float SCALE_LOG2 = %s;  // scale * log2(e)",
                    ElementwiseRenderer.floatLiteral(spec.scale() * 1.4426950408889634));
            e.linef("constexpr int THREADS = %d, WARPS = THREADS / 32;", threads);
            e.line("__shared__ float scratch[WARPS];");
            e.line("const long long row = blockIdx.x;");
            e.line("if (row >= rows) return;");
            e.line("const long long base = row * D;");
            if (spec.causal()) {
                e.linef("const long long last = row %% %dLL;  // the last key this query sees", spec.seqQ());
            }
            tiling.ifPresentOrElse(t -> emitFast(e, t), () -> emitGeneral(e));
        });
        LaunchRule rule = size -> LaunchConfig.linear(Math.max(1, size.get(0)), threads, 0);
        return new CudaKernelSource(spec.name(), e.text(), params, rule, ProblemSize.of(spec.rows()),
                tiling.isPresent() ? "registers" : "general");
    }

    private String masked(String col, String value) {
        return spec.causal() ? "(" + col + " > last ? -LT_INF : " + value + ")" : value;
    }

    private void emitFast(CudaEmitter e, RowTiling t) {
        e.linef("constexpr int V = %d, K = %d;", t.width(), t.vectors());
        e.line("float v[K][V];");
        e.unrolled("k", "K", () -> e.line("lt_load<" + ti + ", V>(x + base + (threadIdx.x + k * THREADS) * V, v[k]);"));
        e.line("float m = -LT_INF;");
        e.unrolled("k", "K", () -> e.unrolled("j", "V", () -> {
            e.line("v[k][j] = " + masked("((threadIdx.x + k * THREADS) * V + j)", "v[k][j] * SCALE_LOG2") + ";");
            e.line("m = fmaxf(m, v[k][j]);");
        }));
        e.line("m = lt_block_max<WARPS>(m, scratch);");
        e.line("if (m == -LT_INF) m = 0.f;  // a fully masked row gives zeros, not NaN");
        e.line("float s = 0.f;");
        e.unrolled("k", "K", () -> e.unrolled("j", "V", () -> {
            e.line("v[k][j] = exp2f(v[k][j] - m);");
            e.line("s += v[k][j];");
        }));
        e.line("s = lt_block_sum<WARPS>(s, scratch);");
        e.line("const float inv = s > 0.f ? 1.f / s : 0.f;");
        e.unrolled("k", "K", () -> {
            e.unrolled("j", "V", () -> e.line("v[k][j] *= inv;"));
            e.line("lt_store<" + to + ", V>(out + base + (threadIdx.x + k * THREADS) * V, v[k]);");
        });
    }

    private void emitGeneral(CudaEmitter e) {
        String t = masked("c", "lt_f32(x[base + c]) * SCALE_LOG2");
        e.line("float m = -LT_INF;");
        e.block("for (long long c = threadIdx.x; c < D; c += THREADS)", () -> e.line("m = fmaxf(m, " + t + ");"));
        e.line("m = lt_block_max<WARPS>(m, scratch);");
        e.line("if (m == -LT_INF) m = 0.f;");
        e.line("float s = 0.f;");
        e.block("for (long long c = threadIdx.x; c < D; c += THREADS)", () -> e.line("s += exp2f(" + t + " - m);"));
        e.line("s = lt_block_sum<WARPS>(s, scratch);");
        e.line("const float inv = s > 0.f ? 1.f / s : 0.f;");
        e.block("for (long long c = threadIdx.x; c < D; c += THREADS)",
                () -> e.line("out[base + c] = lt_from<" + to + ">(exp2f(" + t + " - m) * inv);"));
    }
}
