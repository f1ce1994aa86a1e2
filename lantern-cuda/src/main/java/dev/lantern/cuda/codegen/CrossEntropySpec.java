package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

import java.util.ArrayList;
import java.util.List;

/**
 * cross_entropy and its gradient over logits (rows, V) and integer targets (rows), in three kernels:
 *
 * <pre>
 * TOKENS: tok[r] = logsumexp(x[r]) - x[r, t[r]], 0 where t[r] = ignore     args: logits, targets, tok (f32), rows
 * MEAN:   out = sum_r tok[r] / count(t != ignore)  (one CTA, double)       args: targets, tok, out, rows
 * GRAD:   dx[r] = (softmax(x[r]) - onehot(t[r])) * dloss / count, 0 where ignored
 *                                                                          args: logits, targets, dloss, out, rows
 * </pre>
 *
 * A target outside [0, V) that is not {@code ignore} is never read through: its token's loss and
 * gradient row are NaN (the CPU raises a typed error; the CUDA session checks targets that come
 * from the caller before they are uploaded). All counted ignored rows, as on the CPU, give 0/0 =
 * NaN. Every sum is a fixed tree or a fixed sequence: strict mode may run all three. GRAD counts
 * the targets in every CTA (a scan of {@code rows} integers from L2: cheaper than a kernel and a
 * buffer for the token counts of a training batch).
 */
public record CrossEntropySpec(String name, Stage stage, long rows, long vocab, long ignore, DType inDtype, DType idsType,
                               DType outDtype) implements KernelSpec {
    public enum Stage { TOKENS, MEAN, GRAD }

    public CrossEntropySpec {
        KernelSpec.checkName(name);
        KernelSpec.checkPositive(rows, name + ": rows");
        KernelSpec.checkPositive(vocab, name + ": vocab");
        if (idsType != DType.I32 && idsType != DType.I64) {
            throw new CodegenException(name + ": cross_entropy targets must be i32 or i64, found " + idsType);
        }
    }

    @Override
    public CudaKernelSource render(CudaTarget target) {
        target.requireDtype(inDtype, name);
        target.requireDtype(outDtype, name);
        String ti = CudaPrelude.cType(inDtype);
        String to = CudaPrelude.cType(outDtype);
        String it = idsType == DType.I64 ? "long long" : "int";
        int threads = stage == Stage.MEAN ? 256 : RowGradSpec.threads(vocab);
        CudaEmitter e = new CudaEmitter();
        CudaPrelude.emit(e, "cross_entropy " + stage.name().toLowerCase(java.util.Locale.ROOT));
        List<KernelParam> params = new ArrayList<>();
        if (stage != Stage.MEAN) {
            params.add(new KernelParam("const " + ti + "* __restrict__", "x"));
        }
        params.add(new KernelParam("const " + it + "* __restrict__", "targets"));
        switch (stage) {
            case TOKENS -> params.add(new KernelParam("float* __restrict__", "tok"));
            case MEAN -> {
                params.add(new KernelParam("const float* __restrict__", "tok"));
                params.add(new KernelParam(to + "* __restrict__", "out"));
            }
            case GRAD -> {
                params.add(new KernelParam("const " + ti + "* __restrict__", "dloss"));
                params.add(new KernelParam(to + "* __restrict__", "out"));
            }
        }
        params.add(new KernelParam("long long", "rows"));
        String signature = "extern \"C\" __global__ void __launch_bounds__(" + threads + ") " + name + "("
                + String.join(", ", params.stream().map(KernelParam::toString).toList()) + ")";
        e.block(signature, () -> {
            e.linef("constexpr long long V = %dLL, IGNORE = %dLL;", vocab, ignore);
            e.linef("constexpr int THREADS = %d, WARPS = THREADS / 32;", threads);
            switch (stage) {
                case TOKENS -> emitTokens(e);
                case MEAN -> emitMean(e, to);
                case GRAD -> emitGrad(e, to);
            }
        });
        LaunchRule rule = stage == Stage.MEAN
                ? size -> LaunchConfig.linear(1, threads, 0)
                : size -> LaunchConfig.linear(Math.max(1, size.get(0)), threads, 0);
        return new CudaKernelSource(name, e.text(), params, rule, ProblemSize.of(rows), "general");
    }

    /** m = the row's max, s = sum exp(x - m): the two block reductions of a row's softmax. */
    private static void emitRowMaxSum(CudaEmitter e) {
        e.line("float m = -LT_INF;");
        e.block("for (long long c = threadIdx.x; c < V; c += THREADS)", () -> e.line("m = fmaxf(m, lt_f32(x[base + c]));"));
        e.line("m = lt_block_max<WARPS>(m, scratch);");
        e.line("float s = 0.f;");
        e.block("for (long long c = threadIdx.x; c < V; c += THREADS)", () -> e.line("s += expf(lt_f32(x[base + c]) - m);"));
        e.line("s = lt_block_sum<WARPS>(s, scratch);");
    }

    private static void emitTokens(CudaEmitter e) {
        e.line("__shared__ float scratch[WARPS];");
        e.line("const long long row = blockIdx.x;");
        e.line("if (row >= rows) return;");
        e.line("const long long base = row * V;");
        e.line("const long long t = (long long) targets[row];");
        e.block("if (t == IGNORE || t < 0 || t >= V)", () -> {
            e.line("if (threadIdx.x == 0) tok[row] = t == IGNORE ? 0.f : __int_as_float(0x7fc00000);");
            e.line("return;");
        });
        emitRowMaxSum(e);
        e.line("if (threadIdx.x == 0) tok[row] = (m + logf(s)) - lt_f32(x[base + t]);");
    }

    private static void emitMean(CudaEmitter e, String to) {
        e.comment("thread i sums tokens i, i + THREADS, ... in double; then a fixed tree in shared memory");
        e.line("__shared__ double sum[THREADS];");
        e.line("__shared__ long long cnt[THREADS];");
        e.line("double s = 0.0;");
        e.line("long long n = 0;");
        e.block("for (long long r = threadIdx.x; r < rows; r += THREADS)", () -> {
            e.line("s += (double) tok[r];");
            e.line("n += (long long) targets[r] != IGNORE;");
        });
        e.line("sum[threadIdx.x] = s;");
        e.line("cnt[threadIdx.x] = n;");
        e.line("__syncthreads();");
        e.block("for (int half = THREADS / 2; half > 0; half >>= 1)", () -> {
            e.block("if (threadIdx.x < half)", () -> {
                e.line("sum[threadIdx.x] += sum[threadIdx.x + half];");
                e.line("cnt[threadIdx.x] += cnt[threadIdx.x + half];");
            });
            e.line("__syncthreads();");
        });
        e.line("if (threadIdx.x == 0) out[0] = lt_from<" + to + ">((float) (sum[0] / (double) cnt[0]));  // all ignored: 0/0 = NaN");
    }

    private static void emitGrad(CudaEmitter e, String to) {
        e.line("__shared__ float scratch[WARPS];");
        e.line("const long long row = blockIdx.x;");
        e.line("if (row >= rows) return;");
        e.line("const long long base = row * V;");
        e.comment("the count of counted tokens: exact in f32 below 2^24 tokens");
        e.line("float k = 0.f;");
        e.block("for (long long r = threadIdx.x; r < rows; r += THREADS)", () -> e.line("k += (long long) targets[r] != IGNORE ? 1.f : 0.f;"));
        e.line("const double count = (double) lt_block_sum<WARPS>(k, scratch);");
        e.line("const long long t = (long long) targets[row];");
        e.block("if (t == IGNORE || t < 0 || t >= V)", () -> {
            e.line("const float fill = t == IGNORE ? 0.f : __int_as_float(0x7fc00000);");
            e.line("for (long long c = threadIdx.x; c < V; c += THREADS) out[base + c] = lt_from<" + to + ">(fill);");
            e.line("return;");
        });
        e.line("const float scale = (float) ((double) lt_f32(dloss[0]) / count);");
        emitRowMaxSum(e);
        e.line("const float inv = 1.f / s;");
        e.block("for (long long c = threadIdx.x; c < V; c += THREADS)", () -> {
            e.line("float p = expf(lt_f32(x[base + c]) - m) * inv;");
            e.line("if (c == t) p -= 1.f;");
            e.line("out[base + c] = lt_from<" + to + ">(p * scale);");
        });
    }
}
