package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

/**
 * gather (an embedding lookup) over a contiguous table viewed as {@code [outer, rows, inner]} and
 * contiguous ids ({@code count} of them, i32 or i64):
 * {@code out[b, i, j] = table[b, ids[i], j]}, out contiguous {@code [outer, count, inner]}. A
 * negative id counts from the end (ONNX); an id still outside [0, rows) is never read through: its
 * row is written as NaN (the CPU raises a typed error instead, and the CUDA session checks ids that
 * come from the caller before they are uploaded). Kernel arguments: table, ids, out, n.
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

    @Override
    public CudaKernelSource render(CudaTarget target) {
        target.requireDtype(dtype, name);
        String t = CudaPrelude.cType(dtype);
        String it = idsType == DType.I64 ? "long long" : "int";
        CudaEmitter e = new CudaEmitter();
        CudaPrelude.emit(e, "gather of " + count + " rows of " + inner + " from " + rows + " (x" + outer + " outer)");
        java.util.List<KernelParam> params = java.util.List.of(
                new KernelParam("const " + t + "* __restrict__", "table"),
                new KernelParam("const " + it + "* __restrict__", "ids"),
                new KernelParam(t + "* __restrict__", "out"),
                new KernelParam("long long", "n"));
        String signature = "extern \"C\" __global__ void __launch_bounds__(" + StridedCopyRenderer.THREADS + ") " + name + "("
                + String.join(", ", params.stream().map(KernelParam::toString).toList()) + ")";
        e.block(signature, () -> {
            e.linef("constexpr long long INNER = %dLL, COUNT = %dLL, ROWS = %dLL;", inner, count, rows);
            e.line("const long long stride = (long long) gridDim.x * blockDim.x;");
            e.block("for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)", () -> {
                e.line("const long long j = i % INNER, r = i / INNER, k = r % COUNT, b = r / COUNT;");
                e.line("long long id = (long long) ids[k];");
                e.line("if (id < 0) id += ROWS;");
                e.line("out[i] = id >= 0 && id < ROWS ? table[(b * ROWS + id) * INNER + j] : lt_from<" + t + ">(__int_as_float(0x7fc00000));");
            });
        });
        int sms = target.smCount();
        LaunchRule rule = size -> {
            long grid = Math.min((Math.max(1, size.get(0)) + StridedCopyRenderer.THREADS - 1) / StridedCopyRenderer.THREADS, 16L * sms);
            return LaunchConfig.linear(grid, StridedCopyRenderer.THREADS, 0);
        };
        return new CudaKernelSource(name, e.text(), params, rule, ProblemSize.of(numel()), "general");
    }
}
