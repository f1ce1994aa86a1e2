package dev.lantern.cpu;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.reference.RefTensor;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * layer_norm and rms_norm over rank-3 operands whose rows are not one strided axis, against
 * float64: x read through a permutation of its two leading axes, the residual broadcast over the
 * first axis (stride 0) and the output a dense tensor, so that {@link Iter#rowOffset} takes its
 * general path for two operands and its folded one (one multiply per row) for the others. Widths
 * that no vector length divides, and ones with a whole number of 4-vector blocks (the norms'
 * accumulators) plus a tail.
 */
class NormRowsTest {
    @ParameterizedTest(name = "{0} a={1} b={2} d={3} seed={4}")
    @CsvSource({"layer, 3, 5, 1, 1", "rms, 3, 5, 7, 2", "layer, 2, 7, 33, 3", "rms, 4, 3, 67, 4",
        "layer, 2, 3, 1029, 5", "rms, 5, 2, 256, 6", "layer, 3, 3, 300, 7"})
    void permutedAndBroadcastRowsMatchFloat64(String kind, int a, int b, int d, long seed) {
        boolean layer = kind.equals("layer");
        Tensor xt = KernelTest.randn(DType.F32, seed, b, a, d); // read as (a, b, d): axes 0 and 1 swapped
        Tensor rt = KernelTest.randn(DType.F32, seed + 1, 1, b, d); // broadcast to (a, b, d)
        Tensor w = KernelTest.randn(DType.F32, seed + 2, d);
        Tensor bias = KernelTest.randn(DType.F32, seed + 3, d);
        View x = View.of(xt).permute(1, 0, 2);
        View r = View.of(rt).broadcastTo(Shape.of(a, b, d));
        Tensor out = Tensor.allocate(DType.F32, Shape.of(a, b, d)).poison();
        Tensor sum = Tensor.allocate(DType.F32, Shape.of(a, b, d)).poison();
        float eps = 1e-5f;
        if (layer) {
            Norm.layerNorm(x, r, View.of(w), View.of(bias), eps, View.of(out), View.of(sum));
        } else {
            Norm.rmsNorm(x, r, View.of(w), eps, View.of(out), View.of(sum));
        }
        double[] want = new double[a * b * d];
        double[] wantSum = new double[a * b * d];
        for (int i = 0; i < a; i++) {
            for (int j = 0; j < b; j++) {
                int row = (i * b + j) * d;
                double mean = 0;
                for (int k = 0; k < d; k++) {
                    wantSum[row + k] = (double) xt.get(((long) j * a + i) * d + k) + rt.get((long) j * d + k);
                    mean += wantSum[row + k] / d;
                }
                mean = layer ? mean : 0;
                double var = 0;
                for (int k = 0; k < d; k++) {
                    var += (wantSum[row + k] - mean) * (wantSum[row + k] - mean) / d;
                }
                for (int k = 0; k < d; k++) {
                    want[row + k] = (wantSum[row + k] - mean) / Math.sqrt(var + eps) * w.get(k) + (layer ? bias.get(k) : 0);
                }
            }
        }
        String what = kind + " a=" + a + " b=" + b + " d=" + d + " seed=" + seed;
        // d = 1: layer_norm is exactly the bias (x − mean = 0), rms_norm x/√(x² + eps)·w
        Diff.assertClose(out, new RefTensor(out.shape(), want), d == 1 ? 1e-6 : 1e-5, what);
        Diff.assertClose(sum, new RefTensor(sum.shape(), wantSum), 1e-6, what + " (residual sum)");
        assertEquals(a * b * d, out.numel());
    }
}
