package dev.lantern.cpu;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.reference.RefMath;
import dev.lantern.reference.RefTensor;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.foreign.Arena;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

/**
 * The GEMM epilogue's second residual (a pre-norm block's {@code down(h) + x + attn}): batched
 * (b, m, k) · (k, n) products, packed and unpacked B, the second residual broadcast over the batch
 * (stride 0), odd sizes, against float64; and bit for bit what the residual followed by a separate
 * elementwise add gave before the add moved into the epilogue.
 */
class GemmSecondResidualTest {
    @ParameterizedTest(name = "{0} b={1} m={2} k={3} n={4} act={5} packed={6} seed={7}")
    @CsvSource({"f32, 2, 7, 33, 5, IDENTITY, true, 1", "f32, 3, 65, 300, 70, GELU_TANH, false, 2", "f32, 1, 130, 257, 259, IDENTITY, true, 3",
        "bf16, 2, 33, 64, 17, IDENTITY, false, 4", "f32, 2, 9, 40, 33, RELU, true, 5", "f16, 1, 1, 129, 31, IDENTITY, true, 6"})
    void matchesFloat64AndTheSeparateAdd(String dtype, int b, int m, int k, int n, String act, boolean packed, long seed) {
        DType t = DType.parse(dtype);
        Tensor a = KernelTest.randn(t, seed, b, m, k);
        Tensor w = KernelTest.randn(t, seed + 1, k, n);
        Tensor bias = KernelTest.randn(t, seed + 2, n);
        Tensor r1 = KernelTest.randn(t, seed + 3, b, m, n);
        Tensor r2 = KernelTest.randn(t, seed + 4, m, n); // broadcast over the batch
        UnaryFn f = UnaryFn.valueOf(act);
        GemmEpilogue ep = GemmEpilogue.bias(View.of(bias)).withAct(f).withResidual(View.of(r1));
        View r2b = View.of(r2).broadcastTo(Shape.of(b, m, n));
        Tensor fused = Tensor.allocate(t, Shape.of(b, m, n)).poison();
        Tensor twoPass = Tensor.allocate(t, Shape.of(b, m, n)).poison();
        try (Arena arena = Arena.ofShared()) {
            PackedWeight pw = packed ? PackedWeight.pack(View.of(w), arena) : null;
            if (packed) {
                Gemm.matmul(View.of(a), pw, View.of(fused), false, ep.withResidual2(r2b));
                Gemm.matmul(View.of(a), pw, View.of(twoPass), false, ep);
            } else {
                Gemm.matmul(View.of(a), View.of(w), View.of(fused), false, false, ep.withResidual2(r2b));
                Gemm.matmul(View.of(a), View.of(w), View.of(twoPass), false, false, ep);
            }
        }
        Elementwise.binary(BinaryFn.ADD, View.of(twoPass), r2b, View.of(twoPass));
        String what = dtype + " b=" + b + " m=" + m + " k=" + k + " n=" + n + " " + act + " packed=" + packed + " seed=" + seed;
        if (t == DType.F32) {
            // in f32 the two forms round the same sums in the same order; bf16/f16 round once more in the two-pass form
            assertArrayEquals(twoPass.toFloats(), fused.toFloats(), what + ": fused second residual vs separate add");
        }
        double[] want = new double[b * m * n];
        for (int q = 0; q < b; q++) {
            for (int i = 0; i < m; i++) {
                for (int j = 0; j < n; j++) {
                    double acc = 0;
                    for (int p = 0; p < k; p++) {
                        acc += (double) a.get(((long) q * m + i) * k + p) * w.get((long) p * n + j);
                    }
                    double x = acc + bias.get(j);
                    x = switch (f) {
                        case GELU_TANH -> RefMath.geluTanh(x);
                        case RELU -> Math.max(x, 0);
                        default -> x;
                    };
                    int o = (q * m + i) * n + j;
                    want[o] = x + r1.get(o) + r2.get((long) i * n + j);
                }
            }
        }
        Diff.assertClose(fused, new RefTensor(fused.shape(), want), t == DType.F32 ? 1e-5 : 1e-2, what);
    }
}
