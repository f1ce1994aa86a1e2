package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

import java.util.List;

/**
 * scatter_add by sorted ids, for a table whose rows far outnumber what one id scan per row can
 * afford ({@link ScatterAddSpec} costs size x count comparisons: a LLaMA-shaped model's embedding
 * gradient, 2 048 ids into 32 000 rows of 2 048, took 34 of its 46 ms H200 step). Two kernels, no
 * atomics:
 * <ul>
 * <li>{@link Stage#SORT}: one CTA sorts the keys {@code (row << 32) | position} of every id in shared
 *     memory (a bitonic network; the keys are unique, so the order is the same on every run) and
 *     writes them to a transient buffer. An id outside {@code [0, size)} after the one wrap of a
 *     negative id gets row {@code 0xFFFFFFFF}: it sorts last and matches no row, as in
 *     {@link ScatterAddSpec};</li>
 * <li>{@link Stage#SUM}: one CTA per output row (b, r) and block of columns, as
 *     {@link ScatterAddSpec}: it finds r's first key by binary search and adds the matching updates
 *     in double in position order, so the sums are {@link ScatterAddSpec}'s bit for bit.</li>
 * </ul>
 * Limits: at most {@link #MAX_COUNT} ids (the sort's keys fit the CTA's shared memory) and fewer
 * than {@code 2^32 - 1} rows; beyond them the lowering keeps {@link ScatterAddSpec}.
 * Kernel arguments: SORT (ids, keys, one); SUM (updates, keys, out, rows = outer * size).
 */
public record ScatterAddSortedSpec(String name, Stage stage, long outer, long count, long size, long inner, DType dtype,
                                   DType idsType) implements KernelSpec {
    /** Ids the one-CTA sort takes: 16 384 keys of 8 bytes, 136 KiB of shared memory with the padding slots. */
    public static final long MAX_COUNT = 16_384;
    static final int SORT_THREADS = 1024;
    /** Updates the sum loads ahead of its adds. */
    static final int LOOKAHEAD = 16;

    public enum Stage { SORT, SUM }

    public ScatterAddSortedSpec {
        KernelSpec.checkName(name);
        KernelSpec.checkPositive(outer, name + ": outer");
        KernelSpec.checkPositive(count, name + ": count");
        KernelSpec.checkPositive(size, name + ": size");
        KernelSpec.checkPositive(inner, name + ": inner");
        if (idsType != DType.I32 && idsType != DType.I64) {
            throw new CodegenException(name + ": scatter_add ids must be i32 or i64, found " + idsType);
        }
        if (count > MAX_COUNT || size >= 0xFFFFFFFFL) {
            throw new CodegenException(name + ": the sorted scatter_add takes at most " + MAX_COUNT + " ids and fewer than 2^32-1 rows, found "
                    + count + " ids into " + size + " rows");
        }
    }

    /** Whether the sorted form applies: few enough ids for one CTA's sort, and a target with the shared memory for it. */
    public static boolean applies(long count, long size, CudaTarget target) {
        return count <= MAX_COUNT && size < 0xFFFFFFFFL && sortBytes(count) <= target.sharedBytesPerBlock();
    }

    /** The transient buffer the keys go to. */
    public static long keyBytes(long count) {
        return count * 8;
    }

    static int sortBytes(long count) {
        long p = sortLength(count);
        return (int) ((p + p / PAD_EVERY) * 8);
    }

    /**
     * Keys between the shared-memory padding slots: a thread's keys are consecutive there (t·E + q),
     * 128 bytes apart from the next thread's at 16 keys a thread, which put a half-warp's accesses on
     * one bank pair; a slot after every 16 keys ({@code i + i / 16}) spreads them over all 32 banks.
     */
    static final int PAD_EVERY = 16;

    /** The keys the sort network runs on: the ids' count up to a power of two, at least a warp's 32. */
    static long sortLength(long count) {
        return Math.max(32, pow2(count));
    }

    static long pow2(long n) {
        long p = 1;
        while (p < n) {
            p <<= 1;
        }
        return p;
    }

    @Override
    public CudaKernelSource render(CudaTarget target) {
        target.requireDtype(dtype, name);
        return stage == Stage.SORT ? sort(target) : sum();
    }

    private CudaKernelSource sort(CudaTarget target) {
        int bytes = sortBytes(count);
        if (bytes > target.sharedBytesPerBlock()) {
            throw new CodegenException(name + ": sorting " + count + " ids needs " + bytes + " bytes of shared memory, "
                    + target.arch() + " gives " + target.sharedBytesPerBlock());
        }
        long p = sortLength(count);
        long per = Math.max(1, p / SORT_THREADS);  // keys a thread holds, in registers: its block [t * E, t * E + E)
        long active = p / per;                    // threads holding keys: a power of two, 32 or more
        if (PAD_EVERY % per != 0) {
            throw new CodegenException(name + ": " + per + " keys a thread do not divide the padding run of " + PAD_EVERY);
        }
        String it = idsType == DType.I64 ? "long long" : "int";
        CudaEmitter e = new CudaEmitter();
        CudaPrelude.emit(e, "scatter_add: " + count + " ids sorted by (row, position) in one CTA, no atomics");
        List<KernelParam> params = List.of(
                new KernelParam("const " + it + "* __restrict__", "ids"),
                new KernelParam("unsigned long long* __restrict__", "keys"),
                new KernelParam("long long", "one"));
        e.line("// one bitonic stage whose partners (q, q ^ STRIDE) are both in a thread's registers");
        e.line("template <int N, int STRIDE>");
        e.block("__device__ __forceinline__ void " + name + "_in(unsigned long long (&r)[N], int t, int len)", () -> {
            e.line("#pragma unroll");
            e.block("for (int q = 0; q < N; ++q)", () -> {
                e.line("const int o = q ^ STRIDE;");
                e.block("if (o > q)", () -> {
                    e.line("const bool up = ((t * N + q) & len) == 0;");
                    e.line("const unsigned long long a = r[q], b = r[o];");
                    e.line("if ((a > b) == up) { r[q] = b; r[o] = a; }");
                });
            });
        });
        e.block("extern \"C\" __global__ void __launch_bounds__(" + SORT_THREADS + ") " + name + "("
                + String.join(", ", params.stream().map(KernelParam::toString).toList()) + ")", () -> {
            e.linef("constexpr int COUNT = %d, P = %d, E = %d, ACTIVE = %d;", count, p, per, active);
            e.linef("constexpr long long SIZE = %dLL;", size);
            e.line("extern __shared__ unsigned long long k[];  // key i at PAD(i): a slot after every PAD_EVERY keys");
            e.linef("auto PAD = [](int i) { return i + i / %d; };", PAD_EVERY);
            e.line("if (blockIdx.x >= one) return;");
            e.line("const int t = threadIdx.x;");
            e.line("const bool on = t < ACTIVE;  // whole warps: ACTIVE is a multiple of 32");
            e.line("unsigned long long r[E];");
            e.line("#pragma unroll");
            e.block("for (int q = 0; q < E; ++q)", () -> {
                e.line("const int i = t * E + q;");
                e.line("unsigned long long key = ~0ULL;  // padding sorts after every id");
                e.block("if (on && i < COUNT)", () -> {
                    e.line("long long id = (long long) ids[i];");
                    e.line("if (id < 0) id += SIZE;");
                    e.line("const unsigned long long row = id >= 0 && id < SIZE ? (unsigned long long) id : 0xFFFFFFFFULL;");
                    e.line("key = (row << 32) | (unsigned long long) (unsigned) i;");
                });
                e.line("r[q] = key;");
            });
            e.comment("bitonic: the element at i keeps the smaller of (i, i ^ stride) when i is the lower index of an ascending");
            e.comment("run ((i & len) == 0) or the higher of a descending one; partners within a thread are compared in registers,");
            e.comment("within a warp by shuffles, and across warps through shared memory (the only stages that synchronise)");
            e.block("for (int len = 2; len <= P; len <<= 1)", () -> e.block("for (int stride = len >> 1; stride > 0; stride >>= 1)", () -> {
                e.block("if (stride >= 32 * E)", () -> {
                    e.comment("E divides 16, so a thread's E keys, and its partner's, sit in one run between padding slots");
                    e.line("const int base = t * E, pb = base ^ stride;");
                    e.line("#pragma unroll");
                    e.line("for (int q = 0; q < E; ++q) if (on) k[PAD(base) + q] = r[q];");
                    e.line("__syncthreads();");
                    e.line("const bool small = ((base & stride) == 0) == ((base & len) == 0);  // the same for each q: stride >= E");
                    e.line("#pragma unroll");
                    e.block("for (int q = 0; q < E; ++q)", () -> {
                        e.line("const unsigned long long b = on ? k[PAD(pb) + q] : 0ULL;");
                        e.line("r[q] = small ? (r[q] < b ? r[q] : b) : (r[q] > b ? r[q] : b);");
                    });
                    e.line("__syncthreads();");
                });
                e.block("else if (stride >= E)", () -> e.block("if (on)", () -> {
                    e.line("#pragma unroll");
                    e.block("for (int q = 0; q < E; ++q)", () -> {
                        e.line("const int i = t * E + q;");
                        e.line("const unsigned long long b = __shfl_xor_sync(0xffffffffu, r[q], stride / E);");
                        e.line("const bool small = ((i & stride) == 0) == ((i & len) == 0);");
                        e.line("r[q] = small ? (r[q] < b ? r[q] : b) : (r[q] > b ? r[q] : b);");
                    });
                }));
                e.block("else if (on)", () -> {
                    e.comment("the partner in this thread's own registers: a constant index once the stride is a constant");
                    e.block("switch (stride)", () -> {
                        for (long st = 1; st < per; st <<= 1) {
                            e.linef("case %d: %s_in<E, %d>(r, t, len); break;", st, name, st);
                        }
                        e.line("default: break;");
                    });
                });
            }));
            e.line("#pragma unroll");
            e.line("for (int q = 0; q < E; ++q) if (on && t * E + q < COUNT) keys[t * E + q] = r[q];");
        });
        LaunchRule rule = s -> LaunchConfig.linear(1, SORT_THREADS, bytes);
        return new CudaKernelSource(name, e.text(), params, rule, ProblemSize.of(1), "sorted");
    }

    private CudaKernelSource sum() {
        String t = CudaPrelude.cType(dtype);
        int threads = RowGradSpec.threads(inner);
        long blocks = ScatterAddSpec.colBlocks(inner, threads);
        CudaEmitter e = new CudaEmitter();
        CudaPrelude.emit(e, "scatter_add of " + count + " sorted rows of " + inner + " into " + size + " (x" + outer + " outer), no atomics");
        List<KernelParam> params = List.of(
                new KernelParam("const " + t + "* __restrict__", "upd"),
                new KernelParam("const unsigned long long* __restrict__", "keys"),
                new KernelParam(t + "* __restrict__", "out"),
                new KernelParam("long long", "rows"));
        e.block("extern \"C\" __global__ void __launch_bounds__(" + threads + ") " + name + "("
                + String.join(", ", params.stream().map(KernelParam::toString).toList()) + ")", () -> {
            e.linef("constexpr long long INNER = %dLL, COUNT = %dLL, SIZE = %dLL;", inner, count, size);
            e.linef("constexpr int THREADS = %d;", threads);
            e.linef("constexpr long long COL_BLOCKS = %dLL;", blocks);
            e.line("const long long task = blockIdx.x / COL_BLOCKS;");
            e.line("if (task >= rows) return;");
            e.line("const long long r = task % SIZE, b = task / SIZE;");
            e.line("const long long j = (blockIdx.x % COL_BLOCKS) * THREADS + threadIdx.x;");
            e.line("const bool col = j < INNER;  // every thread stays for the block's synchronisations");
            e.line("const unsigned long long want = (unsigned long long) r << 32;");
            e.line("long long lo = 0, hi = COUNT;  // the first key of row r");
            e.block("while (lo < hi)", () -> {
                e.line("const long long mid = (lo + hi) >> 1;");
                e.line("if (keys[mid] < want) lo = mid + 1; else hi = mid;");
            });
            e.line("double acc = 0.0;");
            e.comment("r's keys come THREADS at a time into shared memory (one coalesced load), so the update loads of a block");
            e.comment("depend on nothing global: LOOKAHEAD of them are in flight before any is added; the adds stay in position order");
            e.linef("constexpr int LOOKAHEAD = %d;", LOOKAHEAD);
            e.line("__shared__ unsigned long long sk[THREADS];");
            e.block("for (long long base = lo; base < COUNT; base += THREADS)", () -> {
                e.line("const long long q = base + threadIdx.x;");
                e.line("const unsigned long long kq = q < COUNT ? keys[q] : ~0ULL;");
                e.line("__syncthreads();  // the last block's keys are used up");
                e.line("sk[threadIdx.x] = kq;");
                e.comment("sorted: r's keys in this block are a prefix of it, as many as match");
                e.line("const int n = __syncthreads_count((kq >> 32) == (unsigned long long) r);");
                e.block("for (int u = 0; u < n; u += LOOKAHEAD)", () -> {
                    e.line("float x[LOOKAHEAD];");
                    e.line("#pragma unroll");
                    e.block("for (int v = 0; v < LOOKAHEAD; ++v)", () -> {
                        e.line("x[v] = col && u + v < n ? lt_f32(upd[(b * COUNT + (long long) (sk[u + v] & 0xFFFFFFFFULL)) * INNER + j]) : 0.f;");
                    });
                    e.line("#pragma unroll");
                    e.line("for (int v = 0; v < LOOKAHEAD; ++v) if (u + v < n) acc += (double) x[v];");
                });
                e.line("if (n < THREADS) break;  // r's run ended inside this block");
            });
            e.line("if (!col) return;");
            e.line("out[(b * SIZE + r) * INNER + j] = lt_from<" + t + ">((float) acc);");
        });
        LaunchRule rule = s -> LaunchConfig.linear(Math.max(1, s.get(0)) * blocks, threads, 0);
        return new CudaKernelSource(name, e.text(), params, rule, ProblemSize.of(outer * size), "sorted");
    }
}
