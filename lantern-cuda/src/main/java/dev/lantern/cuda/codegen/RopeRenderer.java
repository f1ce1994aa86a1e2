package dev.lantern.cuda.codegen;

import java.util.ArrayList;
import java.util.List;

/**
 * Renders a {@link RopeSpec}. One work item is V rotated pairs of one row: for rotate-half,
 * a 16-byte vector from each half (needs (d/2) % V == 0); for interleaved, one 16-byte
 * vector of V/2 pairs (needs d % V == 0). Otherwise the general path does one pair per item.
 * theta_i = base^(-2i/d) is a table computed here in float64; sincosf (full-range, not the
 * __sincosf intrinsic, since angles reach seq radians) gives the rotation.
 */
final class RopeRenderer {
    static final int THREADS = 256;

    private final RopeSpec spec;
    private final CudaTarget target;
    private final int width;
    private final boolean vector;
    private final String ti;
    private final String to;
    private final String xb; // the row's first element in x: "base" when x is contiguous like out

    RopeRenderer(RopeSpec spec, CudaTarget target) {
        this.spec = spec;
        this.target = target;
        target.requireDtype(spec.inDtype(), spec.name());
        target.requireDtype(spec.outDtype(), spec.name());
        int w = target.vectorBytes() / Math.min(spec.inDtype().bytes(), spec.outDtype().bytes());
        int half = spec.headDim() / 2;
        this.vector = (spec.interleaved() ? spec.headDim() % w == 0 : half % w == 0)
                && (spec.input() == null || spec.input().aligned(w));
        this.width = vector ? w : 1;
        this.xb = spec.input() == null ? "base" : "xbase";
        this.ti = CudaPrelude.cType(spec.inDtype());
        this.to = CudaPrelude.cType(spec.outDtype());
    }

    CudaKernelSource render() {
        CudaEmitter e = new CudaEmitter();
        CudaPrelude.emit(e, "rope (" + (spec.interleaved() ? "interleaved" : "rotate-half") + "), "
                + (vector ? "vector x" + width : "general") + " path");
        int d = spec.headDim();
        if (spec.input() != null) {
            e.comment("x is a strided (b, h, s, d) view, read in place; out is contiguous");
        }
        emitThetas(e, spec.name() + "_theta", spec.base(), d);
        List<KernelParam> params = List.of(
                new KernelParam("const " + ti + "* __restrict__", "x"),
                new KernelParam(to + "* __restrict__", "out"),
                new KernelParam("long long", "rows"));
        long chunks = vector ? (spec.interleaved() ? d / width : (d / 2) / width) : d / 2;
        String signature = "extern \"C\" __global__ void __launch_bounds__(" + THREADS + ") " + spec.name() + "("
                + String.join(", ", params.stream().map(KernelParam::toString).toList()) + ")";
        e.block(signature, () -> {
            if (spec.interleaved()) {
                e.linef(vector ? "constexpr int D = %d, V = %d;" : "constexpr int D = %d;", d, width);
            } else if (!vector) {
                e.linef("constexpr int D = %d, HALF = D / 2;", d);
            } else if (spec.interleaved()) {
                e.linef("constexpr int D = %d, V = %d;", d, width);
            } else {
                e.linef("constexpr int D = %d, HALF = D / 2, V = %d;", d, width);
            }
            e.linef("constexpr long long CH = %dLL, SEQ = %dLL, OFFSET = %dLL;", chunks, spec.seq(), spec.offset());
            e.linef("const float* theta = %s_theta;", spec.name());
            e.line("const long long n = rows * CH;");
            e.line("const long long stride = (long long) gridDim.x * blockDim.x;");
            e.block("for (long long w = (long long) blockIdx.x * blockDim.x + threadIdx.x; w < n; w += stride)", () -> {
                e.line("const long long row = w / CH;");
                e.line("const int c = (int) (w - row * CH);");
                e.line("const float pos = (float) (row % SEQ + OFFSET);");
                e.line("const long long base = row * D;");
                RopeSpec.InputLayout in = spec.input();
                if (in != null) {
                    e.linef("const long long xbase = (row / (%dLL * SEQ)) * %dLL + ((row / SEQ) %% %dLL) * %dLL + (row %% SEQ) * %dLL;",
                            in.heads(), in.batchStride(), in.heads(), in.headStride(), in.seqStride());
                }
                if (!vector) {
                    emitGeneral(e);
                } else if (spec.interleaved()) {
                    emitInterleaved(e);
                } else {
                    emitRotateHalf(e);
                }
            });
        });
        int sms = target.smCount();
        LaunchRule rule = size -> {
            long work = Math.max(1, size.get(0) * chunks);
            return LaunchConfig.linear(Math.min((work + THREADS - 1) / THREADS, 16L * sms), THREADS, 0);
        };
        return new CudaKernelSource(spec.name(), e.text(), params, rule, ProblemSize.of(spec.rows()),
                vector ? "vector" : "general");
    }

    private void emitRotateHalf(CudaEmitter e) {
        e.line("float a[V], b[V], ya[V], yb[V];");
        e.line("lt_load<" + ti + ", V>(x + " + xb + " + c * V, a);");
        e.line("lt_load<" + ti + ", V>(x + " + xb + " + HALF + c * V, b);");
        e.unrolled("j", "V", () -> {
            e.line("float sn, cs;");
            sincos(e, "theta[c * V + j]");
            e.line("ya[j] = a[j] * cs - b[j] * sn;");
            e.line("yb[j] = b[j] * cs + a[j] * sn;");
        });
        e.line("lt_store<" + to + ", V>(out + base + c * V, ya);");
        e.line("lt_store<" + to + ", V>(out + base + HALF + c * V, yb);");
    }

    private void emitInterleaved(CudaEmitter e) {
        e.line("float a[V], y[V];");
        e.line("lt_load<" + ti + ", V>(x + " + xb + " + c * V, a);");
        e.unrolled("p", "V / 2", () -> {
            e.line("float sn, cs;");
            sincos(e, "theta[c * (V / 2) + p]");
            e.line("y[2 * p] = a[2 * p] * cs - a[2 * p + 1] * sn;");
            e.line("y[2 * p + 1] = a[2 * p + 1] * cs + a[2 * p] * sn;");
        });
        e.line("lt_store<" + to + ", V>(out + base + c * V, y);");
    }

    private void emitGeneral(CudaEmitter e) {
        e.comment("one pair per item: (i, i + d/2) or (2i, 2i + 1)");
        e.line(spec.interleaved()
                ? "const long long i0 = base + 2 * c, i1 = i0 + 1;"
                : "const long long i0 = base + c, i1 = i0 + HALF;");
        if (spec.input() != null) {
            e.line(spec.interleaved() ? "const long long x0 = xbase + 2 * c, x1 = x0 + 1;"
                    : "const long long x0 = xbase + c, x1 = x0 + HALF;");
        }
        String x0 = spec.input() == null ? "i0" : "x0";
        String x1 = spec.input() == null ? "i1" : "x1";
        e.line("float sn, cs;");
        sincos(e, "theta[c]");
        e.line("const float a = lt_f32(x[" + x0 + "]), b = lt_f32(x[" + x1 + "]);");
        e.line("out[i0] = lt_from<" + to + ">(a * cs - b * sn);");
        e.line("out[i1] = lt_from<" + to + ">(b * cs + a * sn);");
    }

    /** The table {@code name[d / 2]} of theta_i = base^(-2i/d), rounded once from float64 (also the attention kernel's). */
    static void emitThetas(CudaEmitter e, String name, double base, int d) {
        List<String> thetas = new ArrayList<>();
        for (int i = 0; i < d / 2; i++) {
            thetas.add(ElementwiseRenderer.floatLiteral(Math.pow(base, -2.0 * i / d)));
        }
        e.comment("theta_i = base^(-2i/d), rounded once from float64");
        e.line("__device__ const float " + name + "[" + d / 2 + "] = {");
        for (int i = 0; i < thetas.size(); i += 4) {
            e.line("  " + String.join(", ", thetas.subList(i, Math.min(i + 4, thetas.size()))) + ",");
        }
        e.line("};");
        e.blank();
    }

    /** sn, cs of the angle; the inverse rotation (the backward's) negates sin: R(a)^T = R(-a). */
    private void sincos(CudaEmitter e, String theta) {
        e.line("sincosf(pos * " + theta + ", &sn, &cs);");
        if (spec.inverse()) {
            e.line("sn = -sn;  // inverse: rotation by -angle");
        }
    }
}
