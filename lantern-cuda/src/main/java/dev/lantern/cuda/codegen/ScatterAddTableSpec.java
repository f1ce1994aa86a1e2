package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;
import java.util.List;

/**
 * scatter_add into a small table (at most {@link #MAX_ROWS} rows: a small vocabulary's embedding
 * gradient), {@code out[b, r, j] = sum over i with ids[i] = r of updates[b, i, j]}, updates contiguous
 * {@code [outer, count, inner]}, out contiguous {@code [outer, size, inner]}, in two kernels without
 * atomics:
 * <ul>
 * <li>{@link Stage#PARTIAL}: one CTA per (b, block of columns, chunk of {@link #CHUNK} ids). The CTA
 *     keeps the whole table's rows for its columns in shared memory, in double; each thread owns one
 *     column and adds the chunk's updates into the row its id names, in id order (the ids of a tile
 *     staged in shared memory, the same id for every thread at a time). One read of the updates,
 *     where {@link ScatterAddSortedSpec} sorts every id in one CTA first (0.19 ms of its 0.36 at
 *     16 384 ids into 64 rows of 4 096). The chunk's table goes to a transient buffer
 *     {@code [outer, chunks, size, inner]} of doubles.</li>
 * <li>{@link Stage#FINISH}: a thread per output element adds its chunks in chunk order, in double, and
 *     rounds once.</li>
 * </ul>
 * Every sum's order is fixed by the shapes (strict mode may run it); the result is the float64 sum
 * rounded once, as {@link ScatterAddSpec}'s, up to the double sums' association. A negative id counts
 * from the end once; an id still outside [0, size) matches no row. Kernel arguments: PARTIAL (updates,
 * ids, ws, tasks = outer * column blocks * chunks); FINISH (ws, out, n = outer * size * inner).
 */
public record ScatterAddTableSpec(String name, Stage stage, long outer, long count, long size, long inner, DType dtype,
                                  DType idsType) implements KernelSpec {
    /** The largest table kept in one CTA's shared memory: 128 rows of 64 columns in double, 64 KiB. */
    public static final long MAX_ROWS = 128;
    /** Ids a PARTIAL CTA walks. */
    public static final long CHUNK = 1024;
    static final int TILE = 256;
    static final int FINISH_THREADS = 256;

    public enum Stage { PARTIAL, FINISH }

    public ScatterAddTableSpec {
        KernelSpec.checkName(name);
        KernelSpec.checkPositive(outer, name + ": outer");
        KernelSpec.checkPositive(count, name + ": count");
        KernelSpec.checkPositive(size, name + ": size");
        KernelSpec.checkPositive(inner, name + ": inner");
        if (idsType != DType.I32 && idsType != DType.I64) {
            throw new CodegenException(name + ": scatter_add ids must be i32 or i64, found " + idsType);
        }
        if (size > MAX_ROWS) {
            throw new CodegenException(name + ": the small-table scatter_add takes at most " + MAX_ROWS + " rows, found " + size);
        }
    }

    /** Whether the small-table form applies: a table of at most {@link #MAX_ROWS} rows. */
    public static boolean applies(long size) {
        return size <= MAX_ROWS;
    }

    /** Threads (columns) of a PARTIAL CTA: 128 for up to 64 rows, else 64 (64 KiB of doubles either way). */
    public int threads() {
        return size <= 64 ? 128 : 64;
    }

    public long chunks() {
        return (count + CHUNK - 1) / CHUNK;
    }

    public long colBlocks() {
        return (inner + threads() - 1) / threads();
    }

    /** The transient buffer of per-chunk tables: outer * chunks * size * inner doubles. */
    public long workspaceBytes() {
        return Math.multiplyExact(Math.multiplyExact(outer * chunks(), size), inner) * 8;
    }

    @Override
    public CudaKernelSource render(CudaTarget target) {
        target.requireDtype(dtype, name);
        return stage == Stage.PARTIAL ? partial() : finish();
    }

    private CudaKernelSource partial() {
        String t = CudaPrelude.cType(dtype);
        String it = idsType == DType.I64 ? "long long" : "int";
        int threads = threads();
        CudaEmitter e = new CudaEmitter();
        CudaPrelude.emit(e, "scatter_add of " + count + " ids into a table of " + size + " rows of " + inner + " (x" + outer
                + " outer): per-chunk tables in shared memory, no atomics");
        List<KernelParam> params = List.of(
                new KernelParam("const " + t + "* __restrict__", "upd"),
                new KernelParam("const " + it + "* __restrict__", "ids"),
                new KernelParam("double* __restrict__", "ws"),
                new KernelParam("long long", "tasks"));
        String signature = "extern \"C\" __global__ void __launch_bounds__(" + threads + ") " + name + "("
                + String.join(", ", params.stream().map(KernelParam::toString).toList()) + ")";
        e.block(signature, () -> {
            e.linef("constexpr long long INNER = %dLL, COUNT = %dLL, SIZE = %dLL, CHUNK = %dLL, CHUNKS = %dLL, COL_BLOCKS = %dLL;",
                    inner, count, size, CHUNK, chunks(), colBlocks());
            e.linef("constexpr int THREADS = %d, TILE = %d;", threads, TILE);
            e.line("extern __shared__ double table[];  // [SIZE][THREADS]: this CTA's columns of every row");
            e.line("__shared__ int tile[TILE];");
            e.line("const long long task = blockIdx.x;");
            e.line("if (task >= tasks) return;");
            e.line("const long long chunk = task % CHUNKS, cb = (task / CHUNKS) % COL_BLOCKS, b = task / (CHUNKS * COL_BLOCKS);");
            e.line("const long long j = cb * THREADS + threadIdx.x;");
            e.line("for (int r = 0; r < SIZE; ++r) table[r * THREADS + threadIdx.x] = 0.0;");
            e.line("const long long i0 = chunk * CHUNK, i1 = i0 + CHUNK < COUNT ? i0 + CHUNK : COUNT;");
            e.block("for (long long s0 = i0; s0 < i1; s0 += TILE)", () -> {
                e.line("const int len = i1 - s0 < TILE ? (int) (i1 - s0) : TILE;");
                e.line("__syncthreads();  // the previous tile is read by every thread");
                e.block("for (int q = threadIdx.x; q < len; q += THREADS)", () -> {
                    e.line("long long id = (long long) ids[s0 + q];");
                    e.line("id = id < 0 ? id + SIZE : id;");
                    e.line("tile[q] = id >= 0 && id < SIZE ? (int) id : -1;  // -1: matches no row");
                });
                e.line("__syncthreads();");
                e.block("if (j < INNER)", () -> {
                    e.line("const " + t + "* __restrict__ u = upd + (b * COUNT + s0) * INNER + j;");
                    e.line("#pragma unroll 8");
                    e.block("for (int q = 0; q < len; ++q)", () -> {
                        e.line("const int r = tile[q];");
                        e.line("const float x = lt_f32(u[q * INNER]);");
                        e.line("if (r >= 0) table[r * THREADS + threadIdx.x] += (double) x;");
                    });
                });
            });
            e.block("if (j < INNER)", () -> {
                e.line("double* __restrict__ w = ws + ((b * CHUNKS + chunk) * SIZE) * INNER + j;");
                e.line("for (int r = 0; r < SIZE; ++r) w[r * INNER] = table[r * THREADS + threadIdx.x];");
            });
        });
        long tasks = outer * colBlocks() * chunks();
        int smem = (int) (size * threads * 8);
        LaunchRule rule = s -> LaunchConfig.linear(Math.max(1, s.get(0)), threads, smem);
        return new CudaKernelSource(name, e.text(), params, rule, ProblemSize.of(tasks), "table");
    }

    private CudaKernelSource finish() {
        String t = CudaPrelude.cType(dtype);
        CudaEmitter e = new CudaEmitter();
        CudaPrelude.emit(e, "scatter_add's small table: " + chunks() + " chunk tables summed in chunk order, in double");
        List<KernelParam> params = List.of(
                new KernelParam("const double* __restrict__", "ws"),
                new KernelParam(t + "* __restrict__", "out"),
                new KernelParam("long long", "n"));
        String signature = "extern \"C\" __global__ void __launch_bounds__(" + FINISH_THREADS + ") " + name + "("
                + String.join(", ", params.stream().map(KernelParam::toString).toList()) + ")";
        e.block(signature, () -> {
            e.linef("constexpr long long TABLE = %dLL, CHUNKS = %dLL;", size * inner, chunks());
            e.line("const long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x;  // (b, r, j) of out");
            e.line("if (i >= n) return;");
            e.line("const long long b = i / TABLE, k = i % TABLE;");
            e.line("double s = 0.0;");
            e.line("for (long long c = 0; c < CHUNKS; ++c) s += ws[(b * CHUNKS + c) * TABLE + k];");
            e.line("out[i] = lt_from<" + t + ">((float) s);");
        });
        long n = outer * size * inner;
        LaunchRule rule = s -> LaunchConfig.linear(Math.max(1, (s.get(0) + FINISH_THREADS - 1) / FINISH_THREADS), FINISH_THREADS, 0);
        return new CudaKernelSource(name, e.text(), params, rule, ProblemSize.of(n), "table");
    }
}
