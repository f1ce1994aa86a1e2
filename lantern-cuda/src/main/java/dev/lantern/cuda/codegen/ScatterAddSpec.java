package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

import java.util.List;

/**
 * scatter_add (gather's transpose, an embedding's gradient) without atomics:
 * {@code out[b, r, j] = sum over i with ids[i] = r of updates[b, i, j]}, updates contiguous
 * {@code [outer, count, inner]}, out contiguous {@code [outer, size, inner]}. One CTA per output row
 * (b, r) and block of columns: its threads own columns j, scan every id in order (tiles of ids staged
 * in shared memory) and add the matching updates in double, in id order: the CPU's order, on every
 * run (strict mode may run it). The cost is size x count id comparisons per column block. A CTA per
 * row alone (the first version) left a small vocabulary's table to a few CTAs that each walked the
 * ids once per column block: the 16x1024x4096 block's embedding gradient over 64 tokens took 13.4 ms
 * of a 58.7 ms H200 training step (bench train --mode compiled --trace); a sort by id would scale
 * past large vocabularies. A negative id counts from the end once; an id
 * still outside [0, size) matches no row (the CPU raises a typed error; the CUDA session checks ids
 * from the caller first). Kernel arguments: updates, ids, out, rows (= outer * size).
 */
public record ScatterAddSpec(String name, long outer, long count, long size, long inner, DType dtype, DType idsType)
        implements KernelSpec {
    /** Ids staged in shared memory at a time. */
    static final int TILE = 1024;

    public ScatterAddSpec {
        KernelSpec.checkName(name);
        KernelSpec.checkPositive(outer, name + ": outer");
        KernelSpec.checkPositive(count, name + ": count");
        KernelSpec.checkPositive(size, name + ": size");
        KernelSpec.checkPositive(inner, name + ": inner");
        if (idsType != DType.I32 && idsType != DType.I64) {
            throw new CodegenException(name + ": scatter_add ids must be i32 or i64, found " + idsType);
        }
    }

    @Override
    public CudaKernelSource render(CudaTarget target) {
        target.requireDtype(dtype, name);
        String t = CudaPrelude.cType(dtype);
        String it = idsType == DType.I64 ? "long long" : "int";
        int threads = RowGradSpec.threads(inner);
        CudaEmitter e = new CudaEmitter();
        CudaPrelude.emit(e, "scatter_add of " + count + " rows of " + inner + " into " + size + " (x" + outer + " outer), no atomics");
        List<KernelParam> params = List.of(
                new KernelParam("const " + t + "* __restrict__", "upd"),
                new KernelParam("const " + it + "* __restrict__", "ids"),
                new KernelParam(t + "* __restrict__", "out"),
                new KernelParam("long long", "rows"));
        String signature = "extern \"C\" __global__ void __launch_bounds__(" + threads + ") " + name + "("
                + String.join(", ", params.stream().map(KernelParam::toString).toList()) + ")";
        e.block(signature, () -> {
            e.linef("constexpr long long INNER = %dLL, COUNT = %dLL, SIZE = %dLL;", inner, count, size);
            e.linef("constexpr int THREADS = %d, TILE = %d;", threads, TILE);
            e.linef("constexpr long long COL_BLOCKS = %dLL;", colBlocks(inner, threads));
            e.line("__shared__ long long tile[TILE];");
            e.line("const long long task = blockIdx.x / COL_BLOCKS;");
            e.line("if (task >= rows) return;");
            e.line("const long long r = task % SIZE, b = task / SIZE;");
            e.block("", () -> {
                e.line("const long long j = (blockIdx.x % COL_BLOCKS) * THREADS + threadIdx.x;");
                e.line("double acc = 0.0;");
                e.block("for (long long i0 = 0; i0 < COUNT; i0 += TILE)", () -> {
                    e.line("const int len = COUNT - i0 < TILE ? (int) (COUNT - i0) : TILE;");
                    e.line("__syncthreads();  // the previous tile is read by every thread");
                    e.block("for (int q = threadIdx.x; q < len; q += THREADS)", () -> {
                        e.line("long long id = (long long) ids[i0 + q];");
                        e.line("tile[q] = id < 0 ? id + SIZE : id;");
                    });
                    e.line("__syncthreads();");
                    e.block("if (j < INNER)", () -> e.block("for (int q = 0; q < len; ++q)", () -> e.block("if (tile[q] == r)",
                            () -> e.line("acc += (double) lt_f32(upd[(b * COUNT + i0 + q) * INNER + j]);"))));
                });
                e.line("if (j < INNER) out[(b * SIZE + r) * INNER + j] = lt_from<" + t + ">((float) acc);");
            });
        });
        long blocks = colBlocks(inner, threads);
        LaunchRule rule = s -> LaunchConfig.linear(Math.max(1, s.get(0)) * blocks, threads, 0);
        return new CudaKernelSource(name, e.text(), params, rule, ProblemSize.of(outer * size), "general");
    }

    /** Column blocks of {@code threads} that cover {@code inner} columns: CTAs per output row. */
    static long colBlocks(long inner, int threads) {
        return (inner + threads - 1) / threads;
    }
}
