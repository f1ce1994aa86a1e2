package dev.lantern.cuda.codegen;

import java.util.ArrayList;
import java.util.List;

/**
 * The optimizer's kernels over parameters that live where the training step put them (each
 * parameter its own buffer, each gradient at its place in the step's arena), PyTorch's
 * {@code multi_tensor_apply} scheme: a device table of tensors, five 64-bit words each
 * ({@code p, g, m, v, n}: master, gradient, the two moments, element count), and a table of chunks,
 * two words each ({@code tensor, start}), {@link #CHUNK} elements of one tensor per CTA. One launch
 * covers every parameter, whatever their number and sizes (odd, prime, one element).
 *
 * <ul>
 *   <li>{@code lt_mt_sumsq}: per chunk, the sum of squares (in double) of the gradient times the
 *       loss scaler's inverse scale, and whether any of those is inf or NaN. The host adds the
 *       chunks' sums in chunk order, so the global norm is the same on every run (no atomics).
 *   <li>{@code lt_mt_adamw}: AdamW per element, line by line as the CPU's {@code dev.lantern.train.AdamW}
 *       with intrinsics that are never contracted or approximated ({@code __fmul_rn}, {@code __fdiv_rn},
 *       {@code __fsqrt_rn}, {@code fmaf} where the CPU fuses), so both compute the same bits, on the
 *       gradient unscaled ({@code g * inv}) and clipped ({@code * coef}) as the CPU's scaler and
 *       {@code GradClip} leave it:
 *       <pre>
 * p = p * decay                                  (when decay is on)
 * m = fma(w1, g - m, small ? m : g)              (w1 = f32(1 - beta1), or w1 - 1 when it is not small: lerp)
 * v = fma(w2 * g, g, v * b2)
 * p = p + (negStepSize * m) / (sqrt(v) / bc2Sqrt + eps)
 *       </pre>
 *   <li>{@code lt_mt_sgd}: SGD with momentum per element, line by line as the CPU's
 *       {@code dev.lantern.train.Sgd} (its fused multiply-adds as {@code fmaf}, the rest
 *       {@code __fmul_rn}), on the same unscaled and clipped gradient; the tensor table's {@code m}
 *       word is the momentum buffer ({@code v} unused, both 0 without momentum):
 *       <pre>
 * g = fma(wd, p, g)                               (when doDecay)
 * b = first ? g : fma(keep, g, b * momentum)      (when doMomentum; keep = 1 - dampening)
 * g = nesterov ? fma(momentum, b, g) : b          (when doMomentum)
 * p = fma(negLr, g, p)
 *       </pre>
 * </ul>
 */
public final class MultiTensorKernels {
    /** Threads per CTA (the sum's tree reduction assumes a power of two). */
    public static final int THREADS = 256;
    /** Elements of one tensor per CTA. */
    public static final int CHUNK = 16384;
    /** 64-bit words per tensor in the tensor table. */
    public static final int TENSOR_WORDS = 5;
    /** 64-bit words per chunk in the chunk table. */
    public static final int CHUNK_WORDS = 2;

    private MultiTensorKernels() {}

    /** The sum of squares and the non-finite flag per chunk. */
    public static CudaKernelSource sumSquares() {
        String name = "lt_mt_sumsq";
        CudaEmitter e = new CudaEmitter();
        CudaPrelude.emit(e, "multi-tensor sum of squares of the unscaled gradients, one CTA per chunk");
        List<KernelParam> params = List.of(
                new KernelParam("const long long* __restrict__", "tensors"),
                new KernelParam("const long long* __restrict__", "chunks"),
                new KernelParam("float", "inv"),
                new KernelParam("int", "identity"),
                new KernelParam("double* __restrict__", "partial"),
                new KernelParam("int* __restrict__", "bad"));
        e.block(signature(name, params), () -> {
            chunkPrologue(e);
            e.line("double s = 0.0;");
            e.line("int b = 0;");
            e.block("for (long long i = start + threadIdx.x; i < end; i += blockDim.x)", () -> {
                e.line("float x = g[i];");
                e.line("if (!identity) x = __fmul_rn(x, inv);");
                e.line("if (!isfinite(x)) b = 1;");
                e.line("const double d = (double) x;");
                e.line("s = fma(d, d, s);");
            });
            e.line("__shared__ double sh[" + THREADS + "];");
            e.line("__shared__ int sb[" + THREADS + "];");
            e.line("sh[threadIdx.x] = s;");
            e.line("sb[threadIdx.x] = b;");
            e.line("__syncthreads();");
            // a fixed tree: the same additions in the same order on every run
            e.block("for (int k = blockDim.x / 2; k > 0; k >>= 1)", () -> {
                e.block("if (threadIdx.x < k)", () -> {
                    e.line("sh[threadIdx.x] += sh[threadIdx.x + k];");
                    e.line("sb[threadIdx.x] |= sb[threadIdx.x + k];");
                });
                e.line("__syncthreads();");
            });
            e.block("if (threadIdx.x == 0)", () -> {
                e.line("partial[c] = sh[0];");
                e.line("bad[c] = sb[0];");
            });
        });
        return source(name, e, params);
    }

    /** AdamW over every chunk. */
    public static CudaKernelSource adamw() {
        String name = "lt_mt_adamw";
        CudaEmitter e = new CudaEmitter();
        CudaPrelude.emit(e, "multi-tensor AdamW on unscaled, clipped gradients, one CTA per chunk");
        List<KernelParam> params = new ArrayList<>(List.of(
                new KernelParam("const long long* __restrict__", "tensors"),
                new KernelParam("const long long* __restrict__", "chunks"),
                new KernelParam("float", "inv"),
                new KernelParam("int", "identity"),
                new KernelParam("float", "coef"),
                new KernelParam("int", "clip")));
        for (String f : new String[] {"decay", "doDecay", "w1", "small", "w2", "b2", "bc2Sqrt", "eps", "negStepSize"}) {
            params.add(new KernelParam(f.equals("doDecay") || f.equals("small") ? "int" : "float", f));
        }
        e.block(signature(name, params), () -> {
            chunkPrologue(e);
            e.line("float* p = (float*) tensors[t * " + TENSOR_WORDS + "];");
            e.line("float* m = (float*) tensors[t * " + TENSOR_WORDS + " + 2];");
            e.line("float* v = (float*) tensors[t * " + TENSOR_WORDS + " + 3];");
            e.block("for (long long i = start + threadIdx.x; i < end; i += blockDim.x)", () -> {
                e.line("float ge = g[i];");
                e.line("if (!identity) ge = __fmul_rn(ge, inv);");
                e.line("if (clip) ge = __fmul_rn(ge, coef);");
                e.line("float pe = p[i];");
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
            });
        });
        return source(name, e, params);
    }

    /** SGD with momentum (and L2 weight decay, dampening, Nesterov) over every chunk. */
    public static CudaKernelSource sgd() {
        String name = "lt_mt_sgd";
        CudaEmitter e = new CudaEmitter();
        CudaPrelude.emit(e, "multi-tensor SGD with momentum on unscaled, clipped gradients, one CTA per chunk");
        List<KernelParam> params = new ArrayList<>(List.of(
                new KernelParam("const long long* __restrict__", "tensors"),
                new KernelParam("const long long* __restrict__", "chunks"),
                new KernelParam("float", "inv"),
                new KernelParam("int", "identity"),
                new KernelParam("float", "coef"),
                new KernelParam("int", "clip")));
        for (String f : new String[] {"wd", "doDecay", "momentum", "doMomentum", "keep", "first", "nesterov", "negLr"}) {
            params.add(new KernelParam(f.startsWith("do") || f.equals("first") || f.equals("nesterov") ? "int" : "float", f));
        }
        e.block(signature(name, params), () -> {
            chunkPrologue(e);
            e.line("float* p = (float*) tensors[t * " + TENSOR_WORDS + "];");
            e.line("float* b = (float*) tensors[t * " + TENSOR_WORDS + " + 2];");
            e.block("for (long long i = start + threadIdx.x; i < end; i += blockDim.x)", () -> {
                e.line("float ge = g[i];");
                e.line("if (!identity) ge = __fmul_rn(ge, inv);");
                e.line("if (clip) ge = __fmul_rn(ge, coef);");
                e.line("const float pe = p[i];");
                e.line("if (doDecay) ge = fmaf(wd, pe, ge);");
                e.block("if (doMomentum)", () -> {
                    // the first step never reads the buffer: it may hold anything (a fresh allocation)
                    e.line("const float be = first ? ge : fmaf(keep, ge, __fmul_rn(b[i], momentum));");
                    e.line("b[i] = be;");
                    e.line("ge = nesterov ? fmaf(momentum, be, ge) : be;");
                });
                e.line("p[i] = fmaf(negLr, ge, pe);");
            });
        });
        return source(name, e, params);
    }

    private static void chunkPrologue(CudaEmitter e) {
        e.line("const long long c = blockIdx.x;");
        e.line("const long long t = chunks[c * " + CHUNK_WORDS + "];");
        e.line("const long long start = chunks[c * " + CHUNK_WORDS + " + 1];");
        e.line("const float* g = (const float*) tensors[t * " + TENSOR_WORDS + " + 1];");
        e.line("const long long n = tensors[t * " + TENSOR_WORDS + " + 4];");
        e.line("const long long end = start + " + CHUNK + "LL < n ? start + " + CHUNK + "LL : n;");
    }

    private static String signature(String name, List<KernelParam> params) {
        return "extern \"C\" __global__ void __launch_bounds__(" + THREADS + ") " + name + "("
                + String.join(", ", params.stream().map(KernelParam::toString).toList()) + ")";
    }

    /** The launch: one CTA of {@link #THREADS} per chunk (the problem size is the chunk count). */
    private static CudaKernelSource source(String name, CudaEmitter e, List<KernelParam> params) {
        LaunchRule rule = size -> LaunchConfig.linear(Math.max(1, size.get(0)), THREADS, 0);
        return new CudaKernelSource(name, e.text(), params, rule, ProblemSize.of(1), "general");
    }
}
