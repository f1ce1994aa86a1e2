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
 *   <li>{@code lt_mt_decide}: one CTA that adds the chunks' sums in the order of {@link #lanes}
 *       (so the host, adding the same copies in the same order, gets the same bits), and decides the
 *       step as the trainer does: the norm {@code f32(sqrt(sum))} (NaN when a chunk saw an inf or a
 *       NaN), the clip coefficient {@code maxNorm / (norm + 1e-6f)} and whether it clips
 *       ({@code !(coef >= 1)}), and whether the step is skipped (a non-finite gradient under a loss
 *       scaler). It writes the {@link #CONTROL_WORDS} control words {@code coef, clip, skip} that
 *       the optimizer's kernels then read, so no host round trip sits between the gradients and the
 *       update.
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
 * The optimizer's kernels take {@code coef} and {@code clip} by value, or, where {@code control}
 * is not null, from {@code lt_mt_decide}'s control words (returning at once when it says skip).
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
    /**
     * Elements per vector access: where every array of a chunk starts 16-byte aligned (the flat
     * state buffers place each tensor at a multiple of this; masters and gradients are allocated
     * aligned), the loops move float4s, four elements a thread, else one element at a time.
     */
    public static final int ALIGN = 4;
    /** 32-bit words {@code lt_mt_decide} writes: the clip coefficient's bits, whether to clip, whether to skip. */
    public static final int CONTROL_WORDS = 3;

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
            e.block("auto el = [&](float x)", () -> {
                e.line("if (!identity) x = __fmul_rn(x, inv);");
                e.line("if (!isfinite(x)) b = 1;");
                e.line("const double d = (double) x;");
                e.line("s = fma(d, d, s);");
            });
            e.line(";");
            vectorLoop(e, List.of("g"), List.of(), "el(G.x); el(G.y); el(G.z); el(G.w);", "el(g[i]);");
            treeReduce(e);
            e.block("if (threadIdx.x == 0)", () -> {
                e.line("partial[c] = sh[0];");
                e.line("bad[c] = sb[0];");
            });
        });
        return source(name, e, params);
    }

    /**
     * Each thread's sum {@code s} and flag {@code b} into {@code sh[0]} and {@code sb[0]} by a fixed
     * tree over the CTA's {@link #THREADS} threads ({@code sh[i] += sh[i + k]} for {@code k = THREADS/2
     * .. 1}): the same additions in the same order on every run, as {@link #lanes} mirrors them.
     */
    private static void treeReduce(CudaEmitter e) {
        e.line("__shared__ double sh[" + THREADS + "];");
        e.line("__shared__ int sb[" + THREADS + "];");
        e.line("sh[threadIdx.x] = s;");
        e.line("sb[threadIdx.x] = b;");
        e.line("__syncthreads();");
        e.block("for (int k = " + THREADS + " / 2; k > 0; k >>= 1)", () -> {
            e.block("if (threadIdx.x < k)", () -> {
                e.line("sh[threadIdx.x] += sh[threadIdx.x + k];");
                e.line("sb[threadIdx.x] |= sb[threadIdx.x + k];");
            });
            e.line("__syncthreads();");
        });
    }

    /**
     * The chunks' sums added as {@code lt_mt_decide} adds them: chunk {@code c} into lane
     * {@code c % THREADS} in chunk order, then the lanes by the fixed tree of the sum kernels
     * ({@code lane[i] += lane[i + k]} for {@code k = THREADS/2 .. 1}). The host's mirror of the
     * device's sum, bit for bit.
     */
    public static double lanes(double[] partial) {
        double[] lane = new double[THREADS];
        for (int c = 0; c < partial.length; c++) {
            lane[c % THREADS] += partial[c];
        }
        for (int k = THREADS / 2; k > 0; k >>= 1) {
            for (int i = 0; i < k; i++) {
                lane[i] += lane[i + k];
            }
        }
        return lane[0];
    }

    /** The step's decision on the device: one CTA of {@link #THREADS}, launched on a problem size of 1. */
    public static CudaKernelSource decide() {
        String name = "lt_mt_decide";
        CudaEmitter e = new CudaEmitter();
        CudaPrelude.emit(e, "the optimizer step's decision (global norm, clip, skip) from the per-chunk sums, one CTA");
        List<KernelParam> params = List.of(
                new KernelParam("const double* __restrict__", "partial"),
                new KernelParam("const int* __restrict__", "bad"),
                new KernelParam("int", "chunks"),
                new KernelParam("float", "maxNorm"),
                new KernelParam("int", "skipNonFinite"),
                new KernelParam("int* __restrict__", "control"));
        e.block(signature(name, params), () -> {
            e.line("double s = 0.0;");
            e.line("int b = 0;");
            e.block("for (int c = threadIdx.x; c < chunks; c += " + THREADS + ")", () -> {
                e.line("s += partial[c];");
                e.line("b |= bad[c];");
            });
            treeReduce(e);
            e.block("if (threadIdx.x == 0)", () -> {
                e.line("const float norm = sb[0] ? __int_as_float(0x7fc00000) : __double2float_rn(__dsqrt_rn(sh[0]));");
                e.line("const float coef = maxNorm > 0.0f ? __fdiv_rn(maxNorm, __fadd_rn(norm, 1e-6f)) : 1.0f;");
                e.line("control[0] = __float_as_int(coef);");
                e.line("control[1] = maxNorm > 0.0f && !(coef >= 1.0f) ? 1 : 0;");
                e.line("control[2] = skipNonFinite && sb[0] ? 1 : 0;");
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
        params.add(new KernelParam("const int* __restrict__", "control"));
        e.block(signature(name, params), () -> {
            controlPrologue(e);
            chunkPrologue(e);
            e.line("float* __restrict__ p = (float*) tensors[t * " + TENSOR_WORDS + "];");
            e.line("float* __restrict__ m = (float*) tensors[t * " + TENSOR_WORDS + " + 2];");
            e.line("float* __restrict__ v = (float*) tensors[t * " + TENSOR_WORDS + " + 3];");
            e.block("auto el = [&](float ge, float& pe, float& me, float& ve)", () -> {
                e.line("if (!identity) ge = __fmul_rn(ge, inv);");
                e.line("if (clip) ge = __fmul_rn(ge, coef);");
                e.line("if (doDecay) pe = __fmul_rn(pe, decay);");
                e.line("me = fmaf(w1, __fsub_rn(ge, me), small ? me : ge);");
                e.line("ve = fmaf(__fmul_rn(w2, ge), ge, __fmul_rn(ve, b2));");
                e.line("const float denom = __fadd_rn(__fdiv_rn(__fsqrt_rn(ve), bc2Sqrt), eps);");
                e.line("pe = __fadd_rn(pe, __fdiv_rn(__fmul_rn(negStepSize, me), denom));");
            });
            e.line(";");
            vectorLoop(e, List.of("g", "p", "m", "v"), List.of("p", "m", "v"),
                    "el(G.x, P.x, M.x, V.x); el(G.y, P.y, M.y, V.y); el(G.z, P.z, M.z, V.z); el(G.w, P.w, M.w, V.w);",
                    "float pe = p[i], me = m[i], ve = v[i]; el(g[i], pe, me, ve); p[i] = pe; m[i] = me; v[i] = ve;");
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
        params.add(new KernelParam("const int* __restrict__", "control"));
        e.block(signature(name, params), () -> {
            controlPrologue(e);
            chunkPrologue(e);
            e.line("float* __restrict__ p = (float*) tensors[t * " + TENSOR_WORDS + "];");
            e.line("float* __restrict__ b = (float*) tensors[t * " + TENSOR_WORDS + " + 2];");
            // the first step never reads the buffer: it may hold anything (a fresh allocation); without momentum b is 0
            e.block("auto el = [&](float ge, float& pe, float& be)", () -> {
                e.line("if (!identity) ge = __fmul_rn(ge, inv);");
                e.line("if (clip) ge = __fmul_rn(ge, coef);");
                e.line("if (doDecay) ge = fmaf(wd, pe, ge);");
                e.block("if (doMomentum)", () -> {
                    e.line("be = first ? ge : fmaf(keep, ge, __fmul_rn(be, momentum));");
                    e.line("ge = nesterov ? fmaf(momentum, be, ge) : be;");
                });
                e.line("pe = fmaf(negLr, ge, pe);");
            });
            e.line(";");
            e.block("if (doMomentum)", () -> vectorLoop(e, List.of("g", "p", "b"), List.of("p", "b"),
                    "el(G.x, P.x, B.x); el(G.y, P.y, B.y); el(G.z, P.z, B.z); el(G.w, P.w, B.w);",
                    "float pe = p[i], be = b[i]; el(g[i], pe, be); p[i] = pe; b[i] = be;"));
            e.block("else", () -> vectorLoop(e, List.of("g", "p"), List.of("p"),
                    "float bx, by, bz, bw; el(G.x, P.x, bx); el(G.y, P.y, by); el(G.z, P.z, bz); el(G.w, P.w, bw);",
                    "float pe = p[i], be; el(g[i], pe, be); p[i] = pe;"));
        });
        return source(name, e, params);
    }

    /** The by-value {@code coef} and {@code clip} replaced by the control words where there are some; return on skip. */
    private static void controlPrologue(CudaEmitter e) {
        e.block("if (control != nullptr)", () -> {
            e.line("if (control[2]) return;");
            e.line("coef = __int_as_float(control[0]);");
            e.line("clip = control[1];");
        });
    }

    private static void chunkPrologue(CudaEmitter e) {
        e.line("const long long c = blockIdx.x;");
        e.line("const long long t = chunks[c * " + CHUNK_WORDS + "];");
        e.line("const long long start = chunks[c * " + CHUNK_WORDS + " + 1];");
        e.line("const float* __restrict__ g = (const float*) tensors[t * " + TENSOR_WORDS + " + 1];");
        e.line("const long long n = tensors[t * " + TENSOR_WORDS + " + 4];");
        e.line("const long long end = start + " + CHUNK + "LL < n ? start + " + CHUNK + "LL : n;");
    }

    /**
     * The chunk's loop: float4s of every array in {@code loads} (named by their upper-case
     * initial: g -> G) when all of them start the chunk 16-byte aligned, {@code vectorBody} on
     * them, the arrays in {@code stores} written back; the rest (a misaligned chunk, or a tensor's
     * last elements past a multiple of four) one element a thread with {@code scalarBody} at
     * {@code i}. Each element sees the same arithmetic either way.
     */
    private static void vectorLoop(CudaEmitter e, List<String> loads, List<String> stores, String vectorBody, String scalarBody) {
        String aligned = String.join(" | ", loads.stream().map(a -> "(unsigned long long) (" + a + " + start)").toList());
        e.line("const long long nv = ((" + aligned + ") & 15ULL) == 0 ? (end - start) / " + ALIGN + " : 0;");
        e.block("for (long long k = threadIdx.x; k < nv; k += blockDim.x)", () -> {
            e.line("const long long i = start + " + ALIGN + " * k;");
            for (String a : loads) {
                String c = a.equals("g") ? "const float4" : "float4";
                e.line(c + " " + a.toUpperCase(java.util.Locale.ROOT) + " = *reinterpret_cast<const float4*>(" + a + " + i);");
            }
            e.line(vectorBody);
            for (String a : stores) {
                e.line("*reinterpret_cast<float4*>(" + a + " + i) = " + a.toUpperCase(java.util.Locale.ROOT) + ";");
            }
        });
        e.block("for (long long i = start + " + ALIGN + " * nv + threadIdx.x; i < end; i += blockDim.x)", () -> e.line(scalarBody));
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
