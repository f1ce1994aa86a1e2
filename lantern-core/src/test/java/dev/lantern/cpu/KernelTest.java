package dev.lantern.cpu;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.reference.RefMath;
import dev.lantern.reference.RefTensor;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The kernels' fused forms that no single IR op reaches: GEMM epilogues, elementwise programs,
 * norms with a residual prologue, strided operands. References are written out here in float64.
 */
class KernelTest {
    static Tensor randn(DType t, long seed, int... dims) {
        return Philox.normal(Tensor.allocate(t, Shape.of(dims)), seed, 1f);
    }

    static RefTensor ref(Shape s, double[] d) {
        return new RefTensor(s, d);
    }

    @ParameterizedTest(name = "{0} m={1} k={2} n={3} seed={4}")
    @CsvSource({"f32, 7, 33, 5, 11", "f32, 130, 300, 70, 12", "bf16, 33, 64, 17, 13", "f16, 1, 257, 33, 14", "f32, 121, 7, 259, 15"})
    void gemmEpilogueBiasGeluResidualAlpha(String dtype, int m, int k, int n, long seed) {
        DType t = DType.parse(dtype);
        Tensor a = randn(t, seed, m, k);
        Tensor b = randn(t, seed + 1, k, n);
        Tensor bias = randn(t, seed + 2, n);
        Tensor res = randn(t, seed + 3, m, n);
        Tensor c = Tensor.allocate(t, Shape.of(m, n)).poison();
        float alpha = 0.37f;
        GemmEpilogue ep = GemmEpilogue.biasGelu(View.of(bias), true).withAlpha(alpha).withResidual(View.of(res));
        Gemm.matmul(View.of(a), View.of(b), View.of(c), false, false, ep);
        double[] want = new double[m * n];
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                double acc = 0;
                for (int p = 0; p < k; p++) {
                    acc += (double) a.get((long) i * k + p) * b.get((long) p * n + j);
                }
                want[i * n + j] = RefMath.geluTanh(alpha * acc + bias.get(j)) + res.get((long) i * n + j);
            }
        }
        Diff.assertClose(c, ref(Shape.of(m, n), want), t == DType.F32 ? 1e-5 : 1e-2, "gemm epilogue " + dtype + " seed=" + seed);
    }

    @Test
    void gemmOnStridedOperandsInOneArena() {
        long seed = 77;
        // one f32 arena: A (5 x 9) at offset 3 with row stride 11, B read transposed from (4 x 9), C at offset 200
        Tensor arena = randn(DType.F32, seed, 300);
        Gemm.Matrix a = new Gemm.Matrix(arena.segment(), DType.F32, 3, 11, 1);
        Gemm.Matrix bT = new Gemm.Matrix(arena.segment(), DType.F32, 100, 9, 1).t(); // (9 x 4)
        for (int i = 200; i < 220; i++) {
            arena.set(i, Float.NaN);
        }
        float[] before = arena.toFloats();
        Gemm.run(a, bT, Gemm.Matrix.rowMajor(arena.segment(), DType.F32, 200, 4), 5, 4, 9, GemmEpilogue.NONE);
        double[] want = new double[20];
        for (int i = 0; i < 5; i++) {
            for (int j = 0; j < 4; j++) {
                for (int p = 0; p < 9; p++) {
                    want[i * 4 + j] += (double) before[3 + i * 11 + p] * before[100 + j * 9 + p];
                }
            }
        }
        Tensor c = Tensor.allocate(DType.F32, Shape.of(5, 4));
        for (int i = 0; i < 20; i++) {
            c.set(i, arena.get(200 + i));
        }
        Diff.assertClose(c, ref(Shape.of(5, 4), want), 1e-5, "strided gemm seed=" + seed);
        assertEquals(before[199], arena.get(199));
        assertEquals(before[220], arena.get(220));
    }

    @Test
    void elementwiseProgramRunsAChainInOnePass() {
        long seed = 31;
        Tensor x = randn(DType.F32, seed, 3, 7, 33);
        Tensor bias = randn(DType.F32, seed + 1, 33);
        Tensor out = Tensor.allocate(DType.F32, Shape.of(3, 7, 33)).poison();
        Tensor pre = Tensor.allocate(DType.BF16, Shape.of(3, 7, 33)).poison();
        // out = silu(x + bias) * 0.5 - x ; pre = x + bias (bf16)
        var p = ElementwiseProgram.builder();
        int xr = p.load(0);
        int h = p.binary(BinaryFn.ADD, xr, p.load(1));
        p.store(h, 1);
        int y = p.binary(BinaryFn.SUB, p.binary(BinaryFn.MUL, p.unary(UnaryFn.SILU, h), p.constant(0.5f)), xr);
        p.store(y, 0);
        p.build().run(List.of(View.of(x), View.of(bias)), List.of(View.of(out), View.of(pre)));
        double[] want = new double[(int) x.numel()];
        double[] wantPre = new double[want.length];
        for (int i = 0; i < want.length; i++) {
            double hv = (double) x.get(i) + bias.get(i % 33);
            wantPre[i] = hv;
            want[i] = RefMath.silu(hv) * 0.5 - x.get(i);
        }
        Diff.assertClose(out, ref(x.shape(), want), 1e-6, "program seed=" + seed);
        Diff.assertClose(pre, ref(x.shape(), wantPre), 1e-2, "program bf16 store seed=" + seed);
    }

    @ParameterizedTest(name = "{0} seed={1}")
    @CsvSource({"layer, 41", "rms, 42"})
    void normWithResidualPrologue(String kind, long seed) {
        int rows = 9;
        int d = 67;
        Tensor x = randn(DType.F32, seed, rows, d);
        Tensor r = randn(DType.F32, seed + 1, rows, d);
        Tensor w = randn(DType.F32, seed + 2, d);
        Tensor b = randn(DType.F32, seed + 3, d);
        Tensor out = Tensor.allocate(DType.F32, Shape.of(rows, d)).poison();
        Tensor sum = Tensor.allocate(DType.F32, Shape.of(rows, d)).poison();
        float eps = 1e-5f;
        boolean layer = kind.equals("layer");
        if (layer) {
            Norm.layerNorm(View.of(x), View.of(r), View.of(w), View.of(b), eps, View.of(out), View.of(sum));
        } else {
            Norm.rmsNorm(View.of(x), View.of(r), View.of(w), eps, View.of(out), View.of(sum));
        }
        double[] want = new double[rows * d];
        double[] wantSum = new double[rows * d];
        for (int i = 0; i < rows; i++) {
            double mean = 0;
            for (int j = 0; j < d; j++) {
                wantSum[i * d + j] = (double) x.get(i * d + j) + r.get(i * d + j);
                mean += wantSum[i * d + j] / d;
            }
            mean = layer ? mean : 0;
            double var = 0;
            for (int j = 0; j < d; j++) {
                var += (wantSum[i * d + j] - mean) * (wantSum[i * d + j] - mean) / d;
            }
            for (int j = 0; j < d; j++) {
                want[i * d + j] = (wantSum[i * d + j] - mean) / Math.sqrt(var + eps) * w.get(j) + (layer ? b.get(j) : 0);
            }
        }
        Diff.assertClose(out, ref(out.shape(), want), 1e-5, kind + " norm seed=" + seed);
        Diff.assertClose(sum, ref(sum.shape(), wantSum), 1e-6, kind + " residual sum seed=" + seed);
    }

    @Test
    void transposedCopyIsExact() {
        long seed = 5;
        Tensor x = randn(DType.F32, seed, 3, 45, 70);
        Tensor out = Tensor.allocate(DType.F32, Shape.of(70, 3, 45)).poison();
        Copy.run(View.of(x).permute(2, 0, 1), View.of(out));
        for (int c = 0; c < 70; c++) {
            for (int a = 0; a < 3; a++) {
                for (int b = 0; b < 45; b++) {
                    assertEquals(x.get((a * 45L + b) * 70 + c), out.get((c * 3L + a) * 45 + b), "seed=" + seed);
                }
            }
        }
    }

    @Test
    void bf16ConversionsAreBitExact() {
        long seed = 123;
        int n = 1000;
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            // normals at many scales, exact rounding ties, and the specials
            v[i] = switch (i % 10) {
                case 0 -> Float.intBitsToFloat(0x3F808000 + ((i / 10) << 17)); // a tie: low half exactly 0x8000
                case 1 -> Float.NaN;
                case 2 -> i % 20 == 2 ? Float.POSITIVE_INFINITY : Float.NEGATIVE_INFINITY;
                case 3 -> Float.MIN_VALUE * i;
                default -> Philox.normal(seed, i) * (float) Math.pow(10, i % 7 - 3);
            };
        }
        Tensor t = Tensor.allocate(DType.BF16, Shape.of(n));
        Convert.store(v, 0, t.segment(), DType.BF16, 0, 1, n);
        float[] back = new float[n];
        Convert.load(t.segment(), DType.BF16, 0, 1, back, 0, n);
        for (int i = 0; i < n; i++) {
            short want = dev.lantern.tensor.Half.toBf16(v[i]);
            assertEquals(want, t.segment().getAtIndex(java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED, i), "element " + i + " = " + v[i]);
            assertEquals(Float.floatToRawIntBits(dev.lantern.tensor.Half.fromBf16(want)), Float.floatToRawIntBits(back[i]), "element " + i);
        }
    }
}
