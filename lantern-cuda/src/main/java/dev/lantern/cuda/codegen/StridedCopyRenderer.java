package dev.lantern.cuda.codegen;

import java.util.List;

/**
 * Renders a {@link StridedCopySpec}: a grid-stride loop over the elements; each linear index is
 * decomposed over the compile-time shape (innermost first) into the source and destination
 * offsets. Natural alignment only (no vectors): the general path for data movement.
 */
final class StridedCopyRenderer {
    static final int THREADS = 256;

    private final StridedCopySpec spec;
    private final CudaTarget target;
    private final String t;

    StridedCopyRenderer(StridedCopySpec spec, CudaTarget target) {
        this.spec = spec;
        this.target = target;
        target.requireDtype(spec.dtype(), spec.name());
        this.t = CudaPrelude.cType(spec.dtype());
    }

    CudaKernelSource render() {
        List<Long> shape = spec.shape();
        CudaEmitter e = new CudaEmitter();
        CudaPrelude.emit(e, "strided copy of " + shape + ", source strides " + spec.srcStrides() + ", destination strides "
                + spec.dstStrides());
        List<KernelParam> params = List.of(
                new KernelParam("const " + t + "* __restrict__", "in"),
                new KernelParam(t + "* __restrict__", "out"),
                new KernelParam("long long", "n"));
        String signature = "extern \"C\" __global__ void __launch_bounds__(" + THREADS + ") " + spec.name() + "("
                + String.join(", ", params.stream().map(KernelParam::toString).toList()) + ")";
        e.block(signature, () -> {
            e.line("const long long stride = (long long) gridDim.x * blockDim.x;");
            e.block("for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)", () -> {
                e.line("long long rest = i, src = 0, dst = 0;");
                for (int d = shape.size() - 1; d >= 0; d--) {
                    long size = shape.get(d);
                    if (d > 0) {
                        e.linef("{ const long long idx = rest %% %dLL; rest /= %dLL; src += idx * %dLL; dst += idx * %dLL; }",
                                size, size, spec.srcStrides().get(d), spec.dstStrides().get(d));
                    } else {
                        e.linef("src += rest * %dLL; dst += rest * %dLL;", spec.srcStrides().get(d), spec.dstStrides().get(d));
                    }
                }
                e.line("out[dst] = in[src];");
            });
        });
        int sms = target.smCount();
        LaunchRule rule = size -> {
            long grid = Math.min((Math.max(1, size.get(0)) + THREADS - 1) / THREADS, 16L * sms);
            return LaunchConfig.linear(grid, THREADS, 0);
        };
        return new CudaKernelSource(spec.name(), e.text(), params, rule, ProblemSize.of(spec.numel()), "general");
    }
}
