package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

import java.util.ArrayList;
import java.util.List;

/**
 * reduce_sum over any axes of a strided input, deterministically: out[o] = sum over the reduced
 * index k of x[kept(o) + reduced(k)], in double, in a split fixed by the shapes alone (never by the
 * GPU's SM count), so the same bits on every run and every H200 (strict mode may run it).
 *
 * <pre>
 * DIRECT  (splits = 1): thread o sums k = 0 .. R-1 in order                      args: x, out, n = O
 * PARTIAL:             thread (s, o) sums k in [s*C, min(R, (s+1)*C)) into ws[s*O + o]  args: x, ws (double), n = S*O
 * FINISH:              thread o sums ws[s*O + o] for s = 0 .. S-1 in order        args: ws, out, n = O
 * </pre>
 *
 * Consecutive threads take consecutive outputs, so the sum over rows of a (rows, D) gradient (a
 * norm's weight, a bias) reads coalesced rows; a sum over the last axis reads each thread's own
 * contiguous chunk.
 *
 * @param keptDims      the output's dims in order (row-major o), with the input's strides
 * @param reducedDims   the reduced dims in order (row-major k), with the input's strides
 * @param splits        S, the number of chunks of the reduced range
 */
public record ReduceSpec(String name, Stage stage, List<Long> keptDims, List<Long> keptStrides, List<Long> reducedDims,
                         List<Long> reducedStrides, long splits, DType inDtype, DType outDtype) implements KernelSpec {
    public enum Stage { DIRECT, PARTIAL, FINISH }

    /** Threads per CTA. */
    static final int THREADS = 256;

    /** About how many threads a split reduction runs: enough to fill an H200 with a few waves. */
    static final long TARGET_THREADS = 32768;

    public ReduceSpec {
        KernelSpec.checkName(name);
        keptDims = List.copyOf(keptDims);
        keptStrides = List.copyOf(keptStrides);
        reducedDims = List.copyOf(reducedDims);
        reducedStrides = List.copyOf(reducedStrides);
        if (keptDims.size() != keptStrides.size() || reducedDims.size() != reducedStrides.size()) {
            throw new CodegenException(name + ": dims and strides of different ranks");
        }
        KernelSpec.checkPositive(splits, name + ": splits");
        if (stage == Stage.DIRECT && splits != 1) {
            throw new CodegenException(name + ": a direct reduction has one split, not " + splits);
        }
    }

    /** O: output elements. */
    public long outputs() {
        return keptDims.stream().reduce(1L, Math::multiplyExact);
    }

    /** R: input elements per output. */
    public long reduced() {
        return reducedDims.stream().reduce(1L, Math::multiplyExact);
    }

    /** C: reduced elements per split. */
    public long chunk() {
        return (reduced() + splits - 1) / splits;
    }

    /**
     * The split for O outputs of R elements each: one when O alone fills the GPU (or R is short),
     * else enough chunks of at least 64 elements for about {@link #TARGET_THREADS} threads.
     */
    public static long splitsFor(long outputs, long reduced) {
        long s = Math.max(1, Math.min(TARGET_THREADS / Math.max(1, outputs), (reduced + 63) / 64));
        long c = (reduced + s - 1) / s;
        return (reduced + c - 1) / c; // no empty chunk
    }

    /** How many threads the stage runs. */
    public long work() {
        return stage == Stage.PARTIAL ? splits * outputs() : outputs();
    }

    @Override
    public CudaKernelSource render(CudaTarget target) {
        CudaEmitter e = new CudaEmitter();
        CudaPrelude.emit(e, "reduce_sum " + stage.name().toLowerCase(java.util.Locale.ROOT) + ", " + splits + " split(s)");
        List<KernelParam> params = new ArrayList<>();
        if (stage == Stage.FINISH) {
            params.add(new KernelParam("const double* __restrict__", "ws"));
        } else {
            target.requireDtype(inDtype, name);
            params.add(new KernelParam("const " + CudaPrelude.cType(inDtype) + "* __restrict__", "x"));
        }
        if (stage == Stage.PARTIAL) {
            params.add(new KernelParam("double* __restrict__", "ws"));
        } else {
            target.requireDtype(outDtype, name);
            params.add(new KernelParam(CudaPrelude.cType(outDtype) + "* __restrict__", "out"));
        }
        params.add(new KernelParam("long long", "n"));
        String signature = "extern \"C\" __global__ void __launch_bounds__(" + THREADS + ") " + name + "("
                + String.join(", ", params.stream().map(KernelParam::toString).toList()) + ")";
        e.block(signature, () -> {
            e.linef("constexpr long long O = %dLL, R = %dLL, S = %dLL, C = %dLL;", outputs(), reduced(), splits, chunk());
            e.line("const long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x;");
            e.line("if (i >= n) return;");
            e.line("const long long o = i % O;");
            if (stage == Stage.FINISH) {
                e.line("double acc = 0.0;");
                e.line("for (long long s = 0; s < S; ++s) acc += ws[s * O + o];");
                e.line("out[o] = lt_from<" + CudaPrelude.cType(outDtype) + ">((float) acc);");
                return;
            }
            emitOffset(e, "o", "base", keptDims, keptStrides);
            e.line(stage == Stage.PARTIAL ? "const long long k0 = (i / O) * C, k1 = k0 + C < R ? k0 + C : R;"
                    : "const long long k0 = 0, k1 = R;");
            e.line("double acc = 0.0;");
            e.block("for (long long k = k0; k < k1; ++k)", () -> {
                emitOffset(e, "k", "off", reducedDims, reducedStrides);
                e.line("acc += (double) lt_f32(x[base + off]);");
            });
            e.line(stage == Stage.PARTIAL ? "ws[i] = acc;"
                    : "out[o] = lt_from<" + CudaPrelude.cType(outDtype) + ">((float) acc);");
        });
        LaunchRule rule = size -> LaunchConfig.linear(Math.max(1, (size.get(0) + THREADS - 1) / THREADS), THREADS, 0);
        return new CudaKernelSource(name, e.text(), params, rule, ProblemSize.of(work()), stage.name().toLowerCase(java.util.Locale.ROOT));
    }

    /** {@code long long name = offset of row-major index idx over dims, at strides} (compile-time dims). */
    private static void emitOffset(CudaEmitter e, String idx, String name, List<Long> dims, List<Long> strides) {
        List<String> terms = new ArrayList<>();
        boolean any = false;
        for (int d = dims.size() - 1; d >= 0; d--) {
            if (dims.get(d) > 1 && strides.get(d) != 0) {
                any = true;
            }
        }
        if (!any) {
            e.linef("const long long %s = 0;", name);
            return;
        }
        e.linef("long long %s_r = %s;", name, idx);
        for (int d = dims.size() - 1; d >= 0; d--) {
            long n = dims.get(d);
            if (n == 1) {
                continue;
            }
            e.linef("const long long %s_%d = %s_r %% %dLL; %s_r /= %dLL;", name, d, name, n, name, n);
            if (strides.get(d) != 0) {
                terms.add(name + "_" + d + " * " + strides.get(d) + "LL");
            }
        }
        e.linef("(void) %s_r;", name);
        e.linef("const long long %s = %s;", name, String.join(" + ", terms));
    }
}
