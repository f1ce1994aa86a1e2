package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

/**
 * gather (an embedding lookup) over a contiguous table viewed as {@code [outer, rows, inner]} and
 * contiguous ids ({@code count} of them, i32 or i64):
 * {@code out[b, i, j] = table[b, ids[i], j]}, out contiguous {@code [outer, count, inner]}. A
 * negative id counts from the end (ONNX); an id still outside [0, rows) is never read through: its
 * row is written as NaN (the CPU raises a typed error instead, and the CUDA session checks ids that
 * come from the caller before they are uploaded). Kernel arguments: table, ids, out, n.
 *
 * <p>Row by row ({@link Tiling}): the old kernel went element by element with 64-bit division per
 * element and 2- or 4-byte accesses (~140 GB/s on the H200 for the decoder block's 16 384 × 4096
 * f32 lookup); one output row (or one block of a wide row) per group of threads, 16-byte vectors
 * where the row width and the pointers allow, copies at memory speed.
 */
public record GatherSpec(String name, long outer, long count, long rows, long inner, DType dtype, DType idsType)
        implements KernelSpec {
    public GatherSpec {
        KernelSpec.checkName(name);
        KernelSpec.checkPositive(outer, name + ": outer");
        KernelSpec.checkPositive(count, name + ": count");
        KernelSpec.checkPositive(rows, name + ": rows");
        KernelSpec.checkPositive(inner, name + ": inner");
        if (idsType != DType.I32 && idsType != DType.I64) {
            throw new CodegenException(name + ": gather ids must be i32 or i64, found " + idsType);
        }
        if (!dtype.isFloating()) {
            throw new CodegenException(name + ": gather of a " + dtype + " table: the CUDA kernels compute floating dtypes only");
        }
    }

    public long numel() {
        return Math.multiplyExact(Math.multiplyExact(outer, count), inner);
    }

    /**
     * How the copy is split: a task is one output row's block of {@code threadsPerRow × unroll}
     * units (a unit is {@code vector} elements, 16 bytes, when the row's width allows it, else one
     * element); a CTA of {@link #THREADS} works on {@code slots = THREADS / threadsPerRow} tasks at a
     * time, grid-stride over all {@code tasks = outer × count × colBlocks}. Wide rows get whole CTAs
     * (and several blocks when wider than a CTA's 4 units a thread), narrow rows share one.
     *
     * @param vector        elements per unit: 16 bytes' worth when {@code inner} is a multiple of it, else 1
     * @param units         units per row
     * @param threadsPerRow a power of two, at most {@link #THREADS}
     * @param unroll        units per thread per task (1 to 4), all loaded before any is stored
     * @param colBlocks     tasks per row
     */
    public record Tiling(int vector, long units, int threadsPerRow, int unroll, long colBlocks, long tasks) {
        /** Units a task covers. */
        public long width() {
            return (long) threadsPerRow * unroll;
        }

        /** Tasks a CTA works on at once. */
        public int slots() {
            return THREADS / threadsPerRow;
        }
    }

    /** Threads per CTA. */
    public static final int THREADS = 256;

    /** The split of this gather's copy ({@link Tiling}). */
    public Tiling tiling() {
        int bytes = dtype.bytes();
        int vector = 16 % bytes == 0 && 16 / bytes > 1 && inner % (16 / bytes) == 0 ? 16 / bytes : 1;
        long units = inner / vector;
        long fit = Math.min(units, THREADS);
        int tpr = (int) (Long.bitCount(fit) == 1 ? fit : Long.highestOneBit(fit) << 1); // the power of two at or above, at most THREADS
        int unroll = (int) Math.min(4, (units + tpr - 1) / tpr);
        long width = (long) tpr * unroll;
        long colBlocks = (units + width - 1) / width;
        return new Tiling(vector, units, tpr, unroll, colBlocks, Math.multiplyExact(Math.multiplyExact(outer, count), colBlocks));
    }

    /**
     * Row by row: each task reads its id once, then copies its block of the row with 16-byte loads
     * and stores where the width is a multiple of 16 bytes and both pointers are 16-byte aligned
     * (checked on the device: a view at an odd offset takes the element loop, correct at any
     * alignment), element by element otherwise. A row whose id is out of range is written as NaN
     * without a read. The 64-bit index arithmetic is per row, not per element, as the old
     * element-by-element kernel had it.
     */
    @Override
    public CudaKernelSource render(CudaTarget target) {
        target.requireDtype(dtype, name);
        String t = CudaPrelude.cType(dtype);
        String it = idsType == DType.I64 ? "long long" : "int";
        Tiling tl = tiling();
        CudaEmitter e = new CudaEmitter();
        CudaPrelude.emit(e, "gather of " + count + " rows of " + inner + " from " + rows + " (x" + outer + " outer), row by row"
                + (tl.vector() > 1 ? ", 16-byte vectors" : ""));
        java.util.List<KernelParam> params = java.util.List.of(
                new KernelParam("const " + t + "* __restrict__", "table"),
                new KernelParam("const " + it + "* __restrict__", "ids"),
                new KernelParam(t + "* __restrict__", "out"),
                new KernelParam("long long", "n"));
        String signature = "extern \"C\" __global__ void __launch_bounds__(" + THREADS + ") " + name + "("
                + String.join(", ", params.stream().map(KernelParam::toString).toList()) + ")";
        e.block(signature, () -> {
            e.linef("constexpr long long INNER = %dLL, COUNT = %dLL, ROWS = %dLL, UNITS = %dLL, CB = %dLL, TASKS = %dLL;",
                    inner, count, rows, tl.units(), tl.colBlocks(), tl.tasks());
            e.linef("constexpr int TPR = %d, SLOTS = %d, U = %d, V = %d;", tl.threadsPerRow(), tl.slots(), tl.unroll(), tl.vector());
            e.line("(void) n; // the element count is TASKS' rows times INNER, fixed in the source");
            e.line("const int lane = threadIdx.x % TPR;");
            e.line("const " + t + " nan1 = lt_from<" + t + ">(__int_as_float(0x7fc00000));");
            if (tl.vector() > 1) {
                e.line("const bool aligned = ((reinterpret_cast<unsigned long long>(table) | reinterpret_cast<unsigned long long>(out)) & 15ULL) == 0;");
                e.line("uint4 nanv;");
                e.line(t + "* nanel = reinterpret_cast<" + t + "*>(&nanv);");
                e.unrolled("i", "V", () -> e.line("nanel[i] = nan1;"));
            }
            e.block("for (long long task = (long long) blockIdx.x * SLOTS + threadIdx.x / TPR; task < TASKS; task += (long long) gridDim.x * SLOTS)", () -> {
                e.line("const long long c = task % CB, r = task / CB, k = r % COUNT, b = r / COUNT;");
                e.line("long long id = (long long) ids[k];");
                e.line("if (id < 0) id += ROWS;");
                e.line("const bool ok = id >= 0 && id < ROWS;");
                e.line("const " + t + "* __restrict__ src = table + (b * ROWS + (ok ? id : 0LL)) * INNER;");
                e.line(t + "* __restrict__ dst = out + r * INNER;");
                if (tl.vector() > 1) {
                    e.block("if (aligned)", () -> {
                        e.line("const uint4* __restrict__ s4 = reinterpret_cast<const uint4*>(src);");
                        e.line("uint4* __restrict__ d4 = reinterpret_cast<uint4*>(dst);");
                        e.line("const long long v0 = c * (long long) (TPR * U) + lane;");
                        e.line("uint4 x[U];");
                        e.unrolled("u", "U", () -> e.line("if (v0 + u * TPR < UNITS) x[u] = ok ? __ldg(s4 + v0 + u * TPR) : nanv;"));
                        e.unrolled("u", "U", () -> e.line("if (v0 + u * TPR < UNITS) d4[v0 + u * TPR] = x[u];"));
                        e.line("continue;");
                    });
                }
                e.line("const long long e0 = c * (long long) (TPR * U) * V;");
                e.line("const long long e1 = e0 + (long long) (TPR * U) * V < INNER ? e0 + (long long) (TPR * U) * V : INNER;");
                e.line("for (long long j = e0 + lane; j < e1; j += TPR) dst[j] = ok ? src[j] : nan1;");
            });
        });
        int sms = target.smCount();
        long blocks = Math.min((tl.tasks() + tl.slots() - 1) / tl.slots(), 16L * sms);
        LaunchRule rule = size -> LaunchConfig.linear(Math.max(1, blocks), THREADS, 0);
        return new CudaKernelSource(name, e.text(), params, rule, ProblemSize.of(numel()), "general");
    }
}
