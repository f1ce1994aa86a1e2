package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

import java.util.List;

/**
 * scatter_add by sorted ids, for a table whose rows far outnumber what one id scan per row can
 * afford ({@link ScatterAddSpec} costs size x count comparisons: a LLaMA-shaped model's embedding
 * gradient, 2 048 ids into 32 000 rows of 2 048, took 34 of its 46 ms H200 step). Two kernels, no
 * atomics:
 * <ul>
 * <li>{@link Stage#SORT}: one CTA sorts the ids' positions by row with a stable radix sort in shared
 *     memory (8-bit digits, as many passes as the largest row needs: one for a table of up to 255
 *     rows) and writes the keys {@code (row << 32) | position}, ascending, to a transient buffer.
 *     Each pass: every warp counts the digits of its contiguous chunk of ids ({@code __match_any_sync}
 *     groups a round's 32 equal digits), one exclusive scan over (digit, warp) gives every group its
 *     place, and each warp writes its ids there in order, so equal rows keep position order and the
 *     result is the same on every run. An id outside {@code [0, size)} after the one wrap of a
 *     negative id gets row {@code 0xFFFFFFFF}: it sorts last and matches no row, as in
 *     {@link ScatterAddSpec};</li>
 * <li>{@link Stage#SUM}: one CTA per output row (b, r) and block of columns, as
 *     {@link ScatterAddSpec}: it finds r's first key by binary search and adds the matching updates
 *     in double in position order, so the sums are {@link ScatterAddSpec}'s bit for bit.</li>
 * </ul>
 * The first form sorted with a bitonic network of (row, position) keys: 105 synchronised stages at
 * 16 384 ids, 0.17–0.32 ms of the H200 decoder step's 0.61 ms embedding gradient. A sum that loaded
 * 16 bytes of columns a thread (8 bf16, 4 f32) was tried with it and ran slower in the step's trace
 * (0.70 ms a call on the H200, 2026-12-04; the decoder's ids put a tenth of the batch on one row,
 * the separator token, and its CTAs were 8 times fewer): not kept.
 * Limits: at most {@link #MAX_COUNT} ids (the positions fit 16 bits and the CTA's shared memory)
 * and fewer than {@code 2^32 - 1} rows; beyond them the lowering keeps {@link ScatterAddSpec}.
 * Kernel arguments: SORT (ids, keys, one); SUM (updates, keys, out, rows = outer * size).
 */
public record ScatterAddSortedSpec(String name, Stage stage, long outer, long count, long size, long inner, DType dtype,
                                   DType idsType) implements KernelSpec {
    /** Ids the one-CTA sort takes: 16 384 positions, 16 bits each in the sort's two buffers. */
    public static final long MAX_COUNT = 16_384;
    static final int SORT_THREADS = 1024;
    /** Updates the sum loads ahead of its adds. */
    static final int LOOKAHEAD = 16;
    /** Warps of the sort: each ranks one contiguous chunk of the ids. */
    static final int WARPS = SORT_THREADS / 32;
    /** A digit's counters, one per warp, padded to 33 words so that one warp's counters of 32 digits spread over the banks. */
    static final int HIST_STRIDE = WARPS + 1;
    static final int DIGITS = 256;

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

    /** The sort's shared memory: each id's row (4 bytes), the (digit, warp) counters, and two buffers of 16-bit positions. */
    static int sortBytes(long count) {
        long even = (count + 1) / 2 * 2;
        return (int) (count * 4 + (long) DIGITS * HIST_STRIDE * 4 + 2 * even * 2);
    }

    /** 8-bit digit passes: enough for the value {@code size}, which stands for an id out of range. */
    static int passes(long size) {
        int bits = 64 - Long.numberOfLeadingZeros(size);
        return (bits + 7) / 8;
    }

    /** Ids a warp ranks: its share of count, in whole rounds of 32. */
    static long chunk(long count) {
        long perWarp = (count + WARPS - 1) / WARPS;
        return (perWarp + 31) / 32 * 32;
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
        String it = idsType == DType.I64 ? "long long" : "int";
        CudaEmitter e = new CudaEmitter();
        CudaPrelude.emit(e, "scatter_add: " + count + " ids sorted by row (stable: position order within a row) in one CTA, no atomics");
        List<KernelParam> params = List.of(
                new KernelParam("const " + it + "* __restrict__", "ids"),
                new KernelParam("unsigned long long* __restrict__", "keys"),
                new KernelParam("long long", "one"));
        e.block("extern \"C\" __global__ void __launch_bounds__(" + SORT_THREADS + ") " + name + "("
                + String.join(", ", params.stream().map(KernelParam::toString).toList()) + ")", () -> {
            e.linef("constexpr int COUNT = %d, CHUNK = %d, PASSES = %d;", count, chunk(count), passes(size));
            e.linef("constexpr int WARPS = %d, DIGITS = %d, HS = %d;", WARPS, DIGITS, HIST_STRIDE);
            e.linef("constexpr unsigned SIZE = %du;  // also the row of an id out of range: after every real row", size);
            e.line("constexpr unsigned NONE = 0x100u;  // a lane past the ids: no digit");
            e.line("extern __shared__ unsigned int sm[];");
            e.line("unsigned int* row = sm;                 // row[i]: id i's row");
            e.line("unsigned int* hist = row + COUNT;       // hist[d * HS + w]: warp w's count of digit d, then its first place");
            e.line("unsigned short* perm0 = reinterpret_cast<unsigned short*>(hist + DIGITS * HS);");
            e.line("unsigned short* perm1 = perm0 + (COUNT + 1) / 2 * 2;");
            e.line("__shared__ unsigned int wsum[WARPS];");
            e.line("if (blockIdx.x >= one) return;");
            e.line("const int t = threadIdx.x, lane = t & 31, w = t >> 5;");
            e.line("const unsigned below = (1u << lane) - 1u;");
            e.block("for (int i = t; i < COUNT; i += blockDim.x)", () -> {
                e.line("long long id = (long long) ids[i];");
                e.line("if (id < 0) id += (long long) SIZE;");
                e.line("row[i] = id >= 0 && id < (long long) SIZE ? (unsigned) id : SIZE;");
            });
            e.block("for (int pass = 0; pass < PASSES; ++pass)", () -> {
                e.line("const int shift = 8 * pass;");
                e.line("const unsigned short* src = pass & 1 ? perm1 : perm0;");
                e.line("unsigned short* dst = pass & 1 ? perm0 : perm1;");
                e.line("for (int i = t; i < DIGITS * HS; i += blockDim.x) hist[i] = 0u;");
                e.line("__syncthreads();");
                e.comment("1. each warp counts the digits of its chunk, 32 ids a round: one add per group of equal digits");
                e.block("for (int base = w * CHUNK; base < w * CHUNK + CHUNK && base < COUNT; base += 32)", () -> {
                    e.line("const int i = base + lane;");
                    e.line("const unsigned d = i < COUNT ? (row[pass == 0 ? i : src[i]] >> shift) & 0xFFu : NONE;");
                    e.line("const unsigned peers = __match_any_sync(0xffffffffu, d);");
                    e.line("if (d != NONE && (peers & below) == 0u) hist[d * HS + w] += __popc(peers);");
                    e.line("__syncwarp();");
                });
                e.line("__syncthreads();");
                e.comment("2. exclusive scan of the counts in (digit, warp) order: thread t holds digit t / 4, warps 8 (t % 4) ..");
                e.block("", () -> {
                    e.line("const int d = t >> 2, w0 = (t & 3) * 8;");
                    e.line("unsigned v[8], s = 0u;");
                    e.line("#pragma unroll");
                    e.line("for (int q = 0; q < 8; ++q) { v[q] = hist[d * HS + w0 + q]; s += v[q]; }");
                    e.line("unsigned x = s;");
                    e.line("#pragma unroll");
                    e.line("for (int o = 1; o < 32; o <<= 1) { const unsigned y = __shfl_up_sync(0xffffffffu, x, o); if (lane >= o) x += y; }");
                    e.line("if (lane == 31) wsum[w] = x;");
                    e.line("__syncthreads();");
                    e.block("if (w == 0)", () -> {
                        e.line("const unsigned z = wsum[lane];");
                        e.line("unsigned zi = z;");
                        e.line("#pragma unroll");
                        e.line("for (int o = 1; o < 32; o <<= 1) { const unsigned y = __shfl_up_sync(0xffffffffu, zi, o); if (lane >= o) zi += y; }");
                        e.line("wsum[lane] = zi - z;");
                    });
                    e.line("__syncthreads();");
                    e.line("unsigned at = wsum[w] + x - s;");
                    e.line("#pragma unroll");
                    e.line("for (int q = 0; q < 8; ++q) { hist[d * HS + w0 + q] = at; at += v[q]; }");
                });
                e.line("__syncthreads();");
                e.comment("3. each warp writes its ids to their places, in order: a group's first place, then its rank among equal digits");
                e.block("for (int base = w * CHUNK; base < w * CHUNK + CHUNK && base < COUNT; base += 32)", () -> {
                    e.line("const int i = base + lane;");
                    e.line("const unsigned p = i < COUNT ? (pass == 0 ? (unsigned) i : (unsigned) src[i]) : 0u;");
                    e.line("const unsigned d = i < COUNT ? (row[p] >> shift) & 0xFFu : NONE;");
                    e.line("const unsigned peers = __match_any_sync(0xffffffffu, d);");
                    e.line("if (d != NONE) dst[hist[d * HS + w] + __popc(peers & below)] = (unsigned short) p;");
                    e.line("__syncwarp();");
                    e.line("if (d != NONE && (peers & below) == 0u) hist[d * HS + w] += __popc(peers);");
                    e.line("__syncwarp();");
                });
                e.line("__syncthreads();");
            });
            e.line("const unsigned short* sorted = PASSES & 1 ? perm1 : perm0;");
            e.block("for (int i = t; i < COUNT; i += blockDim.x)", () -> {
                e.line("const unsigned p = sorted[i], r = row[p];");
                e.line("keys[i] = ((unsigned long long) (r == SIZE ? 0xFFFFFFFFu : r) << 32) | (unsigned long long) p;");
            });
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
