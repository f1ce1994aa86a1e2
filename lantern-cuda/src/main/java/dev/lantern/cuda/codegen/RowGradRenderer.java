package dev.lantern.cuda.codegen;

import java.util.ArrayList;
import java.util.List;

/**
 * Renders a {@link RowGradSpec}: one CTA per row, threads striding over the row (any width: no
 * vector path, so odd and prime widths take the same code), each pass re-reading the row from
 * L1/L2. Sums are f32 per thread, then a block-wide tree.
 */
final class RowGradRenderer {
    private final RowGradSpec spec;
    private final String ti;
    private final String tw;
    private final String to;

    RowGradRenderer(RowGradSpec spec, CudaTarget target) {
        this.spec = spec;
        target.requireDtype(spec.inDtype(), spec.name());
        target.requireDtype(spec.outDtype(), spec.name());
        this.ti = CudaPrelude.cType(spec.inDtype());
        this.to = CudaPrelude.cType(spec.outDtype());
        if (spec.kind() != RowGradSpec.Kind.SOFTMAX) {
            target.requireDtype(spec.weightDtype(), spec.name());
            this.tw = CudaPrelude.cType(spec.weightDtype());
        } else {
            this.tw = null;
        }
    }

    CudaKernelSource render() {
        CudaEmitter e = new CudaEmitter();
        boolean softmax = spec.kind() == RowGradSpec.Kind.SOFTMAX;
        CudaPrelude.emit(e, switch (spec.kind()) {
            case SOFTMAX -> "softmax_grad";
            case RMS_NORM -> "rms_norm_grad";
            case LAYER_NORM -> "layer_norm_grad";
        } + (spec.residual() ? " + residual" : "") + ", one CTA per row");
        List<KernelParam> params = new ArrayList<>();
        params.add(new KernelParam("const " + ti + "* __restrict__", softmax ? "y" : "x"));
        if (!softmax) {
            params.add(new KernelParam("const " + tw + "* __restrict__", "w"));
        }
        params.add(new KernelParam("const " + ti + "* __restrict__", "dy"));
        if (spec.residual()) {
            params.add(new KernelParam("const " + to + "* __restrict__", "res"));
        }
        params.add(new KernelParam(to + "* __restrict__", "out"));
        params.add(new KernelParam("long long", "rows"));
        int threads = RowGradSpec.threads(spec.cols());
        String signature = "extern \"C\" __global__ void __launch_bounds__(" + threads + ") " + spec.name() + "("
                + String.join(", ", params.stream().map(KernelParam::toString).toList()) + ")";
        e.block(signature, () -> {
            e.linef("constexpr long long D = %dLL;", spec.cols());
            e.linef("constexpr int THREADS = %d, WARPS = THREADS / 32;", threads);
            e.line("__shared__ float scratch[WARPS];");
            e.line("const long long row = blockIdx.x;");
            e.line("if (row >= rows) return;");
            e.line("const long long base = row * D;");
            if (softmax) {
                emitSoftmax(e);
            } else {
                emitNorm(e, spec.kind() == RowGradSpec.Kind.LAYER_NORM);
            }
        });
        LaunchRule rule = size -> LaunchConfig.linear(Math.max(1, size.get(0)), threads, 0);
        return new CudaKernelSource(spec.name(), e.text(), params, rule, ProblemSize.of(spec.rows()), "general");
    }

    private void emitSoftmax(CudaEmitter e) {
        e.linef("constexpr float SCALE = %s;", ElementwiseRenderer.floatLiteral(spec.param()));
        e.line("float p = 0.f;");
        e.block("for (long long c = threadIdx.x; c < D; c += THREADS)",
                () -> e.line("p = fmaf(lt_f32(y[base + c]), lt_f32(dy[base + c]), p);"));
        e.line("const float dot = lt_block_sum<WARPS>(p, scratch);");
        e.block("for (long long c = threadIdx.x; c < D; c += THREADS)",
                () -> e.line("out[base + c] = lt_from<" + to + ">(SCALE * lt_f32(y[base + c]) * (lt_f32(dy[base + c]) - dot));"));
    }

    private void emitNorm(CudaEmitter e, boolean centre) {
        e.linef("constexpr float EPS = %s;", ElementwiseRenderer.floatLiteral(spec.param()));
        e.comment("the forward's row statistics, recomputed from x (the forward graph saves nothing)");
        if (centre) {
            e.line("float s = 0.f;");
            e.block("for (long long c = threadIdx.x; c < D; c += THREADS)", () -> e.line("s += lt_f32(x[base + c]);"));
            e.line("const float mean = lt_block_sum<WARPS>(s, scratch) * (1.f / (float) D);");
        } else {
            e.line("const float mean = 0.f;");
        }
        e.line("float q = 0.f;");
        e.block("for (long long c = threadIdx.x; c < D; c += THREADS)", () -> {
            e.line("const float v = lt_f32(x[base + c]) - mean;");
            e.line("q = fmaf(v, v, q);");
        });
        e.comment("IEEE sqrt and division (not rsqrtf): the CPU's 1 / sqrt, to a rounding");
        e.line("const float r = 1.f / sqrtf(lt_block_sum<WARPS>(q, scratch) * (1.f / (float) D) + EPS);");
        e.line("float gs = 0.f, gx = 0.f;");
        e.block("for (long long c = threadIdx.x; c < D; c += THREADS)", () -> {
            e.line("const float xh = (lt_f32(x[base + c]) - mean) * r;");
            e.line("const float g = lt_f32(w[c]) * lt_f32(dy[base + c]);");
            e.line("gs += g;");
            e.line("gx = fmaf(g, xh, gx);");
        });
        if (centre) {
            e.line("const float gmean = lt_block_sum<WARPS>(gs, scratch) * (1.f / (float) D);");
        } else {
            e.line("(void) gs;");
            e.line("const float gmean = 0.f;");
        }
        e.line("const float gxm = lt_block_sum<WARPS>(gx, scratch) * (1.f / (float) D);");
        e.block("for (long long c = threadIdx.x; c < D; c += THREADS)", () -> {
            e.line("const float xh = (lt_f32(x[base + c]) - mean) * r;");
            e.line("const float g = lt_f32(w[c]) * lt_f32(dy[base + c]);");
            if (spec.residual()) {
                e.comment("the residual stream's gradient, added in f32 and rounded once; __fadd_rn is never contracted into an FMA,");
                e.comment("so dx is rounded to f32 first and the sum is the unfused add's, bit for bit, when out is f32");
                e.line("const float dx = r * (g - gmean - xh * gxm);");
                e.line("out[base + c] = lt_from<" + to + ">(__fadd_rn(dx, lt_f32(res[base + c])));");
            } else {
                e.line("out[base + c] = lt_from<" + to + ">(r * (g - gmean - xh * gxm));");
            }
        });
    }
}
