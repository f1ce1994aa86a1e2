package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

import java.util.ArrayList;
import java.util.List;

/**
 * The fused AdamW step over every parameter in one launch: the parameters, gradients and moments
 * each live in one flat f32 buffer (parameter after parameter), so one grid-stride loop covers them
 * all, and under AMP the same pass writes the bf16/f16 low copy. Per element, the CPU's
 * {@code dev.lantern.train.AdamW} line by line, with intrinsics that are never contracted or
 * approximated ({@code __fmul_rn}, {@code __fdiv_rn}, {@code __fsqrt_rn}, {@code fmaf} where the CPU
 * fuses), so both compute the same bits:
 *
 * <pre>
 * p = p * decay                                  (when decay is on)
 * m = fma(w1, g - m, small ? m : g)              (w1 = f32(1 - beta1), or w1 - 1 when it is not small: lerp)
 * v = fma(w2 * g, g, v * b2)
 * p = p + (negStepSize * m) / (sqrt(v) / bc2Sqrt + eps)
 * low = round_nearest_even(p)
 * </pre>
 *
 * Kernel arguments: p, g, m, v, [low], n, decay, doDecay, w1, small, w2, b2, bc2Sqrt, eps, negStepSize.
 * The step's scalars are computed on the host in double, as the CPU computes them.
 */
public final class AdamWKernel {
    /** Threads per CTA. */
    public static final int THREADS = 256;

    private AdamWKernel() {}

    /** The kernel's entry name for a low copy of {@code low} (null: none). */
    public static String entry(DType low) {
        return low == null ? "lt_adamw" : "lt_adamw_" + low.name().toLowerCase(java.util.Locale.ROOT);
    }

    /** The kernel writing a low copy of {@code low} (bf16 or f16), or none when null. */
    public static CudaKernelSource render(DType low, CudaTarget target) {
        if (low != null && low != DType.BF16 && low != DType.F16) {
            throw new CodegenException("an AdamW low copy is bf16 or f16, not " + low);
        }
        String name = entry(low);
        CudaEmitter e = new CudaEmitter();
        CudaPrelude.emit(e, "fused multi-tensor AdamW over flat f32 buffers" + (low == null ? "" : ", " + low + " low copy"));
        List<KernelParam> params = new ArrayList<>(List.of(
                new KernelParam("float* __restrict__", "p"),
                new KernelParam("const float* __restrict__", "g"),
                new KernelParam("float* __restrict__", "m"),
                new KernelParam("float* __restrict__", "v")));
        if (low != null) {
            params.add(new KernelParam(CudaPrelude.cType(low) + "* __restrict__", "low"));
        }
        params.add(new KernelParam("long long", "n"));
        for (String f : new String[] {"decay", "doDecay", "w1", "small", "w2", "b2", "bc2Sqrt", "eps", "negStepSize"}) {
            params.add(new KernelParam(f.equals("doDecay") || f.equals("small") ? "int" : "float", f));
        }
        String signature = "extern \"C\" __global__ void __launch_bounds__(" + THREADS + ") " + name + "("
                + String.join(", ", params.stream().map(KernelParam::toString).toList()) + ")";
        e.block(signature, () -> {
            e.line("const long long stride = (long long) gridDim.x * blockDim.x;");
            e.block("for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)", () -> {
                e.line("float pe = p[i];");
                e.line("const float ge = g[i];");
                e.line("float me = m[i];");
                e.line("float ve = v[i];");
                e.line("if (doDecay) pe = __fmul_rn(pe, decay);");
                e.line("me = fmaf(w1, __fsub_rn(ge, me), small ? me : ge);");
                e.line("ve = fmaf(__fmul_rn(w2, ge), ge, __fmul_rn(ve, b2));");
                e.line("const float denom = __fadd_rn(__fdiv_rn(__fsqrt_rn(ve), bc2Sqrt), eps);");
                e.line("pe = __fadd_rn(pe, __fdiv_rn(__fmul_rn(negStepSize, me), denom));");
                e.line("p[i] = pe;");
                e.line("m[i] = me;");
                e.line("v[i] = ve;");
                if (low != null) {
                    e.line("low[i] = lt_from<" + CudaPrelude.cType(low) + ">(pe);");
                }
            });
        });
        int sms = target.smCount();
        LaunchRule rule = size -> LaunchConfig.linear(Math.max(1, Math.min((size.get(0) + THREADS - 1) / THREADS, 8L * sms)), THREADS, 0);
        return new CudaKernelSource(name, e.text(), params, rule, ProblemSize.of(1), "general");
    }
}
