package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * norm_weight_grad: {@code dw[j] = Σ_r dy[r, j]·x̂[r, j]} over the rows of contiguous (rows, D) x and
 * dy, x̂ recomputed per row in f32 as the forward norm computes it, never stored. Two stages, no
 * atomics, the order of every sum fixed by the shapes alone (strict mode may run it):
 *
 * <pre>
 * PARTIAL: grid (chunks, colBlocks); CTA (c, b) owns rows [c*CH, min(R, (c+1)*CH)) and columns
 *          [b*THREADS*K, (b+1)*THREADS*K): thread t holds columns b*THREADS*K + t + k*THREADS (k < K)
 *          in registers. Per row, in order: the row statistics (block sums in f32, as NormRenderer's:
 *          mean for layer, then the centred squares; from the registers when one block covers the
 *          row, else from a strided pass over the whole row), then acc[k] += (double) (dy·x̂) with
 *          the product in f32 (the unfused mul's). Writes ws[c*D + j] = acc.    args: x, dy, ws, rows
 * FINISH:  grid ceil(D / 32), 256 threads = 32 columns x 8 groups; group g sums ws[c*D + j] for
 *          c = g, g+8, ... in order (double), then group 0 adds the 8 group sums in order and
 *          writes dw[j] in the output dtype.                                    args: ws, out, D
 * </pre>
 *
 * The partials are chunks x D doubles (12.2 MiB for 16384 rows of 4096), where the composition
 * norm(x, ones), mul, reduce_sum wrote and re-read x̂ and the product, each as large as x.
 */
public record NormWeightGradSpec(String name, Stage stage, Kind kind, long rows, long cols, double eps, DType xDtype, DType dyDtype,
                                 DType outDtype) implements KernelSpec {
    public enum Stage { PARTIAL, FINISH }

    public enum Kind { RMS, LAYER }

    /** Columns a thread keeps in registers at most (two 16-wide f32/double arrays). */
    static final int MAX_PER_THREAD = 16;
    /**
     * PARTIAL CTAs an SM must hold (its launch bounds): each thread keeps two rows of x and dy
     * (this one and the next, requested early) beside its double accumulators, about 110 registers.
     */
    static final int PARTIAL_CTAS_PER_SM = 2;
    /**
     * About how many PARTIAL CTAs to run, a constant (never the device's SM count, so the sums' order
     * is the shapes'): 2 CTAs of 256 an SM, 2 x 132 = 264 is one full wave on an H200.
     */
    static final long TARGET_CTAS = 264;
    /** FINISH: columns per CTA (one warp's coalesced row of partials) and groups of chunks. */
    static final int FINISH_COLS = 32;
    static final int FINISH_GROUPS = 8;

    public NormWeightGradSpec {
        KernelSpec.checkName(name);
        KernelSpec.checkPositive(rows, name + ": rows");
        KernelSpec.checkPositive(cols, name + ": cols");
        if (!Double.isFinite(eps) || eps < 0) {
            throw new CodegenException(name + ": eps must be finite and >= 0, got " + eps);
        }
    }

    /** Threads of a PARTIAL CTA: the row's width in whole warps, at most 256. */
    public int threads() {
        return (int) Math.min(256, (cols + 31) / 32 * 32);
    }

    /** K: columns per thread. */
    public int perThread() {
        return (int) Math.min(MAX_PER_THREAD, (cols + threads() - 1) / threads());
    }

    /** Column blocks of THREADS*K columns: one unless the row is wider than 4096. */
    public long colBlocks() {
        long block = (long) threads() * perThread();
        return (cols + block - 1) / block;
    }

    /** CH: rows per chunk, for about {@link #TARGET_CTAS} PARTIAL CTAs. */
    public long chunkRows() {
        return Math.max(1, (rows * colBlocks() + TARGET_CTAS - 1) / TARGET_CTAS);
    }

    /** Chunks of rows: the partials' count per column (no empty chunk). */
    public long chunks() {
        return (rows + chunkRows() - 1) / chunkRows();
    }

    /** Bytes of the partials buffer between the stages. */
    public long workspaceBytes() {
        return Math.multiplyExact(chunks() * cols, 8L);
    }

    @Override
    public CudaKernelSource render(CudaTarget target) {
        CudaEmitter e = new CudaEmitter();
        String stageName = stage.name().toLowerCase(Locale.ROOT);
        CudaPrelude.emit(e, "norm_weight_grad (" + kind.name().toLowerCase(Locale.ROOT) + ") " + stageName + ", "
                + chunks() + " chunk(s) of " + chunkRows() + " row(s)");
        List<KernelParam> params = new ArrayList<>();
        int threads = stage == Stage.PARTIAL ? threads() : FINISH_COLS * FINISH_GROUPS;
        if (stage == Stage.PARTIAL) {
            target.requireDtype(xDtype, name);
            target.requireDtype(dyDtype, name);
            params.add(new KernelParam("const " + CudaPrelude.cType(xDtype) + "* __restrict__", "x"));
            params.add(new KernelParam("const " + CudaPrelude.cType(dyDtype) + "* __restrict__", "dy"));
            params.add(new KernelParam("double* __restrict__", "ws"));
            params.add(new KernelParam("long long", "rows"));
        } else {
            target.requireDtype(outDtype, name);
            params.add(new KernelParam("const double* __restrict__", "ws"));
            params.add(new KernelParam(CudaPrelude.cType(outDtype) + "* __restrict__", "out"));
            params.add(new KernelParam("long long", "n"));
        }
        String bounds = stage == Stage.PARTIAL ? threads + ", " + PARTIAL_CTAS_PER_SM : String.valueOf(threads);
        String signature = "extern \"C\" __global__ void __launch_bounds__(" + bounds + ") " + name + "("
                + String.join(", ", params.stream().map(KernelParam::toString).toList()) + ")";
        e.block(signature, () -> {
            if (stage == Stage.PARTIAL) {
                emitPartial(e);
            } else {
                emitFinish(e);
            }
        });
        long gridX = stage == Stage.PARTIAL ? chunks() : (cols + FINISH_COLS - 1) / FINISH_COLS;
        int gridY = stage == Stage.PARTIAL ? Math.toIntExact(colBlocks()) : 1;
        LaunchRule rule = size -> new LaunchConfig(Math.max(1, size.get(0)), Math.toIntExact(size.get(1)), 1, threads, 1, 1, 0);
        return new CudaKernelSource(name, e.text(), params, rule, ProblemSize.of(gridX, gridY), stageName);
    }

    private void emitPartial(CudaEmitter e) {
        boolean wholeRow = colBlocks() == 1;
        boolean layer = kind == Kind.LAYER;
        e.linef("constexpr long long D = %dLL, CH = %dLL;", cols, chunkRows());
        e.linef("constexpr float EPS = %s;", ElementwiseRenderer.floatLiteral(eps));
        e.linef("constexpr int THREADS = %d, WARPS = THREADS / 32, K = %d;", threads(), perThread());
        e.line("__shared__ float scratch[WARPS];");
        e.line("const long long c0 = (long long) blockIdx.y * (THREADS * K) + threadIdx.x;");
        e.line("const long long r0 = (long long) blockIdx.x * CH;");
        e.line("const long long r1 = r0 + CH < rows ? r0 + CH : rows;");
        e.line("double acc[K];");
        e.unrolled("k", "K", () -> e.line("acc[k] = 0.0;"));
        e.comment("row r's x and dy are in registers before its statistics are summed, and row r + 1's are requested before");
        e.comment("row r is used: one memory latency a row, overlapped with the block sums (a column past D holds 0)");
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
            if (wholeRow) {
                e.comment("the row statistics from the registers (a column past D holds 0 and adds nothing)");
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
            } else {
                e.comment("a row wider than one block: every column block recomputes the statistics over the whole row (from L2)");
                if (layer) {
                    e.line("float s = 0.f;");
                    e.line("for (long long c = threadIdx.x; c < D; c += THREADS) s += lt_f32(x[base + c]);");
                    e.line("const float mean = lt_block_sum<WARPS>(s, scratch) * (1.f / (float) D);");
                } else {
                    e.line("const float mean = 0.f;");
                }
                e.line("float q = 0.f;");
                e.block("for (long long c = threadIdx.x; c < D; c += THREADS)", () -> {
                    e.line("const float v = lt_f32(x[base + c]) - mean;");
                    e.line("q = fmaf(v, v, q);");
                });
            }
            e.line("const float rstd = rsqrtf(lt_block_sum<WARPS>(q, scratch) * (1.f / (float) D) + EPS);");
            e.unrolled("k", "K", () -> e.block("if (c0 + k * THREADS < D)", () ->
                    e.line("acc[k] += (double) (gy[k] * ((h[k] - mean) * rstd));")));
            e.unrolled("k", "K", () -> e.line("h[k] = hn[k]; gy[k] = gn[k];"));
        });
        e.unrolled("k", "K", () -> e.block("if (c0 + k * THREADS < D)", () ->
                e.line("ws[(long long) blockIdx.x * D + c0 + k * THREADS] = acc[k];")));
    }

    private void emitFinish(CudaEmitter e) {
        e.linef("constexpr long long D = %dLL, C = %dLL;", cols, chunks());
        e.linef("constexpr int COLS = %d, GROUPS = %d;", FINISH_COLS, FINISH_GROUPS);
        e.line("__shared__ double part[GROUPS][COLS];");
        e.line("const int lane = threadIdx.x % COLS, g = threadIdx.x / COLS;");
        e.line("const long long col = (long long) blockIdx.x * COLS + lane;");
        e.line("(void) n;");
        e.line("double acc = 0.0;");
        e.line("if (col < D) for (long long c = g; c < C; c += GROUPS) acc += ws[c * D + col];");
        e.line("part[g][lane] = acc;");
        e.line("__syncthreads();");
        e.block("if (g == 0 && col < D)", () -> {
            e.line("double t = 0.0;");
            e.unrolled("i", "GROUPS", () -> e.line("t += part[i][lane];"));
            e.line("out[col] = lt_from<" + CudaPrelude.cType(outDtype) + ">((float) t);");
        });
    }
}
