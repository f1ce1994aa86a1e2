package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A norm's whole backward over contiguous (rows, D) x and dy in one read of each: dx (as
 * {@link RowGradSpec}'s RMS_NORM or LAYER_NORM, with or without the residual operand) and the
 * weight gradient's per-chunk column sums (as {@link NormWeightGradSpec}'s PARTIAL stage writes
 * them, for its FINISH stage to add up). The two kernels it replaces each read x and dy once more:
 * at the decoder step's 16 384 × 4096 in f32 that is 0.54 GB a norm.
 *
 * <pre>
 * grid chunks (NormWeightGradSpec's, from the shapes alone), THREADS = the row in whole warps, at
 * most 256; thread t holds columns t + k*THREADS (k &lt; K) of x and dy in registers, row r + 1's
 * requested before row r is used. Per row, in order:
 *   mean (layer), q = Σ (x - mean)^2      block sums, as RowGradRenderer's strided loops add them
 *   r = 1 / sqrt(q / D + eps), x̂ = (x - mean)·r, g = w·dy
 *   gs = Σ g (layer), gx = Σ g·x̂           block sums
 *   out = r·(g - gs/D - x̂·gx/D) [+ res]   stored
 *   acc[k] += dy·x̂ (f32, one FMA)          the weight gradient's partial, in row order
 * then ws[chunk*D + col] = acc.                         args: x, w, dy[, res], out, ws, rows
 * </pre>
 *
 * dx is bit for bit the unfused row kernel's (the same sums in the same order, the same IEEE
 * square root and division). No atomics; every order is fixed by the shapes, so strict mode may
 * run it. Rows up to 4096 wide only (one column block of registers); a wider row keeps the two
 * kernels.
 */
public record NormBackwardSpec(String name, NormWeightGradSpec.Kind kind, long rows, long cols, double eps, DType xDtype,
                               DType weightDtype, DType dyDtype, DType outDtype, boolean residual) implements KernelSpec {
    /** The widest row a thread block holds in registers: 256 threads of 16 columns. */
    public static final long MAX_COLS = 256L * NormWeightGradSpec.MAX_PER_THREAD;

    public NormBackwardSpec {
        KernelSpec.checkName(name);
        KernelSpec.checkPositive(rows, name + ": rows");
        KernelSpec.checkPositive(cols, name + ": cols");
        if (cols > MAX_COLS) {
            throw new CodegenException(name + ": the fused norm backward holds a row in registers, at most " + MAX_COLS
                    + " columns, got " + cols);
        }
        if (!Double.isFinite(eps) || eps < 0) {
            throw new CodegenException(name + ": eps must be finite and >= 0, got " + eps);
        }
    }

    /**
     * CTAs an SM must hold (the launch bounds' second figure): two, as the PARTIAL stage asks, except
     * a layer norm with the residual, whose centred sums and residual operand do not fit 128
     * registers a thread without spilling (ptxas at 4096 columns): one.
     */
    public int ctasPerSm() {
        return kind == NormWeightGradSpec.Kind.LAYER && residual ? 1 : NormWeightGradSpec.PARTIAL_CTAS_PER_SM;
    }

    /** The weight gradient's PARTIAL stage this kernel stands in for: its chunks, threads and workspace. */
    public NormWeightGradSpec partials() {
        return new NormWeightGradSpec("lt_norm_dw", NormWeightGradSpec.Stage.PARTIAL, kind, rows, cols, eps, xDtype, dyDtype, outDtype);
    }

    @Override
    public CudaKernelSource render(CudaTarget target) {
        for (DType t : new DType[] {xDtype, weightDtype, dyDtype, outDtype}) {
            target.requireDtype(t, name);
        }
        NormWeightGradSpec p = partials();
        int threads = p.threads();
        CudaEmitter e = new CudaEmitter();
        CudaPrelude.emit(e, kind.name().toLowerCase(Locale.ROOT) + " norm backward, dx" + (residual ? " + residual" : "")
                + " and the weight gradient's partials, " + p.chunks() + " chunk(s) of " + p.chunkRows() + " row(s)");
        String to = CudaPrelude.cType(outDtype);
        List<KernelParam> params = new ArrayList<>();
        params.add(new KernelParam("const " + CudaPrelude.cType(xDtype) + "* __restrict__", "x"));
        params.add(new KernelParam("const " + CudaPrelude.cType(weightDtype) + "* __restrict__", "w"));
        params.add(new KernelParam("const " + CudaPrelude.cType(dyDtype) + "* __restrict__", "dy"));
        if (residual) {
            params.add(new KernelParam("const " + to + "* __restrict__", "res"));
        }
        params.add(new KernelParam(to + "* __restrict__", "out"));
        params.add(new KernelParam("double* __restrict__", "ws"));
        params.add(new KernelParam("long long", "rows"));
        String signature = "extern \"C\" __global__ void __launch_bounds__(" + threads + ", " + ctasPerSm()
                + ") " + name + "(" + String.join(", ", params.stream().map(KernelParam::toString).toList()) + ")";
        e.block(signature, () -> emitBody(e, p, to));
        LaunchRule rule = size -> LaunchConfig.linear(Math.max(1, size.get(0)), threads, 0);
        return new CudaKernelSource(name, e.text(), params, rule, ProblemSize.of(p.chunks()), "fused");
    }

    private void emitBody(CudaEmitter e, NormWeightGradSpec p, String to) {
        boolean layer = kind == NormWeightGradSpec.Kind.LAYER;
        e.linef("constexpr long long D = %dLL, CH = %dLL;", cols, p.chunkRows());
        e.linef("constexpr float EPS = %s;", ElementwiseRenderer.floatLiteral(eps));
        e.linef("constexpr int THREADS = %d, WARPS = THREADS / 32, K = %d;", p.threads(), p.perThread());
        e.line("__shared__ float scratch[WARPS];");
        e.line("const long long c0 = threadIdx.x;");
        e.line("const long long r0 = (long long) blockIdx.x * CH;");
        e.line("const long long r1 = r0 + CH < rows ? r0 + CH : rows;");
        e.comment("the chunk's column sums in f32 (a chunk is a few dozen rows; FINISH adds the chunks in double): double");
        e.comment("accumulators beside two rows of x and dy would spill");
        e.line("float acc[K];");
        e.unrolled("k", "K", () -> e.line("acc[k] = 0.f;"));
        e.comment("row r's x and dy are in registers before its sums, row r + 1's requested before row r is used (a column past D holds 0)");
        e.line("float h[K], gy[K];");
        e.unrolled("k", "K", () -> {
            e.line("h[k] = r0 < r1 && c0 + k * THREADS < D ? lt_f32(x[r0 * D + c0 + k * THREADS]) : 0.f;");
            e.line("gy[k] = r0 < r1 && c0 + k * THREADS < D ? lt_f32(dy[r0 * D + c0 + k * THREADS]) : 0.f;");
        });
        e.block("for (long long r = r0; r < r1; ++r)", () -> {
            e.line("const long long base = r * D;");
            e.line("float hn[K], gn[K];");
            e.line("const bool more = r + 1 < r1;");
            e.unrolled("k", "K", () -> {
                e.line("hn[k] = more && c0 + k * THREADS < D ? lt_f32(x[base + D + c0 + k * THREADS]) : 0.f;");
                e.line("gn[k] = more && c0 + k * THREADS < D ? lt_f32(dy[base + D + c0 + k * THREADS]) : 0.f;");
            });
            if (residual) {
                e.comment("this row's residual requested before the row's sums, so its latency hides behind them");
                e.line("float rv[K];");
                e.unrolled("k", "K", () -> e.line("rv[k] = c0 + k * THREADS < D ? lt_f32(res[base + c0 + k * THREADS]) : 0.f;"));
            }
            if (layer) {
                e.line("float s = 0.f;");
                e.unrolled("k", "K", () -> e.line("s += h[k];"));
                e.line("const float mean = lt_block_sum<WARPS>(s, scratch) * (1.f / (float) D);");
            } else {
                e.line("const float mean = 0.f;");
            }
            e.line("float q = 0.f;");
            e.unrolled("k", "K", () -> e.block("if (c0 + k * THREADS < D)", () -> {
                e.line("const float v = h[k] - mean;");
                e.line("q = fmaf(v, v, q);");
            }));
            e.comment("IEEE sqrt and division (not rsqrtf): the CPU's 1 / sqrt, to a rounding, as the unfused dx kernel");
            e.line("const float rs = 1.f / sqrtf(lt_block_sum<WARPS>(q, scratch) * (1.f / (float) D) + EPS);");
            e.line("float gs = 0.f, gx = 0.f;");
            e.unrolled("k", "K", () -> e.block("if (c0 + k * THREADS < D)", () -> {
                e.line("const float xh = (h[k] - mean) * rs;");
                e.line("const float g = lt_f32(w[c0 + k * THREADS]) * gy[k];");
                e.line("gs += g;");
                e.line("gx = fmaf(g, xh, gx);");
            }));
            if (layer) {
                e.line("const float gmean = lt_block_sum<WARPS>(gs, scratch) * (1.f / (float) D);");
            } else {
                e.line("(void) gs;");
                e.line("const float gmean = 0.f;");
            }
            e.line("const float gxm = lt_block_sum<WARPS>(gx, scratch) * (1.f / (float) D);");
            e.unrolled("k", "K", () -> e.block("if (c0 + k * THREADS < D)", () -> {
                e.line("const float xh = (h[k] - mean) * rs;");
                e.line("const float g = lt_f32(w[c0 + k * THREADS]) * gy[k];");
                if (residual) {
                    e.comment("the residual stream's gradient, added in f32 and rounded once (never contracted into an FMA)");
                    e.line("const float dx = rs * (g - gmean - xh * gxm);");
                    e.line("out[base + c0 + k * THREADS] = lt_from<" + to + ">(__fadd_rn(dx, rv[k]));");
                } else {
                    e.line("out[base + c0 + k * THREADS] = lt_from<" + to + ">(rs * (g - gmean - xh * gxm));");
                }
                e.line("acc[k] = fmaf(gy[k], xh, acc[k]);");
            }));
            e.unrolled("k", "K", () -> e.line("h[k] = hn[k]; gy[k] = gn[k];"));
        });
        e.unrolled("k", "K", () -> e.block("if (c0 + k * THREADS < D)", () ->
                e.line("ws[(long long) blockIdx.x * D + c0 + k * THREADS] = (double) acc[k];")));
    }
}
