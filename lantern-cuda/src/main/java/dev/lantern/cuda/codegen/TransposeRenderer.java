package dev.lantern.cuda.codegen;

import java.util.ArrayList;
import java.util.List;

/**
 * Renders a {@link PermuteSpec} whose last axis moves, through a 32x32 shared-memory tile.
 * Let L be the input's last axis (contiguous in the input) and P the input axis that becomes
 * the output's last (contiguous in the output). A CTA of 32x8 threads reads a tile
 * (32 of P) x (32 of L) with threads along L, and writes it with threads along P; all other
 * axes are a flattened batch decomposed with compile-time sizes. The tile is padded by one
 * element per row against bank conflicts.
 */
final class TransposeRenderer {
    private static final int TILE = 32;
    private static final int ROWS = 8;

    private final PermuteSpec spec;
    private final String t;

    TransposeRenderer(PermuteSpec spec, CudaTarget target) {
        this.spec = spec;
        target.requireDtype(spec.dtype(), spec.name());
        this.t = CudaPrelude.cType(spec.dtype());
    }

    CudaKernelSource render() {
        List<Long> in = spec.inShape();
        List<Integer> perm = spec.perm();
        int rank = in.size();
        int axisL = rank - 1;
        int axisP = perm.get(rank - 1);
        List<Long> inStrides = ElementwiseSpec.contiguousStrides(in);
        List<Long> outStrides = ElementwiseSpec.contiguousStrides(spec.outShape());
        long[] outStrideOfIn = new long[rank];  // stride in the output of each input axis
        for (int i = 0; i < rank; i++) {
            outStrideOfIn[perm.get(i)] = outStrides.get(i);
        }
        List<Integer> batchAxes = new ArrayList<>();
        for (int a = 0; a < rank; a++) {
            if (a != axisL && a != axisP && in.get(a) > 1) {
                batchAxes.add(a);
            }
        }
        long sizeL = in.get(axisL);
        long sizeP = in.get(axisP);
        long tilesL = (sizeL + TILE - 1) / TILE;
        long tilesP = (sizeP + TILE - 1) / TILE;
        long batch = 1;
        for (int a : batchAxes) {
            batch *= in.get(a);
        }

        CudaEmitter e = new CudaEmitter();
        CudaPrelude.emit(e, "permute " + perm + " of " + in + ", shared-memory tile path");
        List<KernelParam> params = List.of(
                new KernelParam("const " + t + "* __restrict__", "in"),
                new KernelParam(t + "* __restrict__", "out"),
                new KernelParam("long long", "n"));
        String signature = "extern \"C\" __global__ void __launch_bounds__(" + TILE * ROWS + ") " + spec.name() + "("
                + String.join(", ", params.stream().map(KernelParam::toString).toList()) + ")";
        long batchCount = batch;
        e.block(signature, () -> {
            e.linef("constexpr int TILE = %d, ROWS = %d;", TILE, ROWS);
            e.linef("constexpr long long SIZE_L = %dLL, SIZE_P = %dLL, TILES_L = %dLL, TILES_P = %dLL;",
                    sizeL, sizeP, tilesL, tilesP);
            e.linef("constexpr long long IN_STRIDE_P = %dLL, OUT_STRIDE_L = %dLL;",
                    inStrides.get(axisP), outStrideOfIn[axisL]);
            e.line("__shared__ " + t + " tile[TILE][TILE + 1];");
            e.line("(void) n;");
            e.line("long long b = blockIdx.x;");
            e.line("const long long l0 = (b % TILES_L) * TILE; b /= TILES_L;");
            e.line("const long long p0 = (b % TILES_P) * TILE; b /= TILES_P;");
            e.linef("if (b >= %dLL) return;", batchCount);
            e.comment("the batch axes: offsets in the input and in the output");
            e.line("long long in_base = 0, out_base = 0;");
            for (int i = batchAxes.size() - 1; i >= 0; i--) {
                int a = batchAxes.get(i);
                e.block("", () -> {
                    e.linef("const long long idx = b %% %dLL; b /= %dLL;", in.get(a), in.get(a));
                    e.linef("in_base += idx * %dLL;", inStrides.get(a));
                    e.linef("out_base += idx * %dLL;", outStrideOfIn[a]);
                });
            }
            e.block("for (int k = threadIdx.y; k < TILE; k += ROWS)", () -> {
                e.line("const long long p = p0 + k, l = l0 + threadIdx.x;");
                e.line("if (p < SIZE_P && l < SIZE_L) tile[k][threadIdx.x] = in[in_base + p * IN_STRIDE_P + l];");
            });
            e.line("__syncthreads();");
            e.block("for (int k = threadIdx.y; k < TILE; k += ROWS)", () -> {
                e.line("const long long l = l0 + k, p = p0 + threadIdx.x;");
                e.line("if (p < SIZE_P && l < SIZE_L) out[out_base + l * OUT_STRIDE_L + p] = tile[threadIdx.x][k];");
            });
        });
        long grid = batch * tilesL * tilesP;
        LaunchRule rule = size -> new LaunchConfig(grid, 1, 1, TILE, ROWS, 1, 0);
        return new CudaKernelSource(spec.name(), e.text(), params, rule, ProblemSize.of(spec.numel()), "tiled");
    }
}
