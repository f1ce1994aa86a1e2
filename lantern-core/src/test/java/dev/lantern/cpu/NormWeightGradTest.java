package dev.lantern.cpu;

import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.Shape;
import dev.lantern.ir.TensorType;
import dev.lantern.reference.RefTensor;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * norm_weight_grad's CPU kernel against its float64 reference (the composition Σ_rows dy·norm(x, ones)),
 * on odd and prime shapes (one row, one column, more rows than the kernel's chunks), rms and layer,
 * f32 and the 16-bit floats, inputs drawn fresh from a recorded seed, the output poisoned first.
 */
class NormWeightGradTest {
    static final long SEED = 20261202L;

    @TestFactory
    Stream<DynamicTest> cpuKernelMatchesTheReference() {
        List<DynamicTest> tests = new ArrayList<>();
        for (int[] dims : new int[][] {{1, 1}, {1, 13}, {7, 1}, {3, 7, 13}, {131, 17}, {2, 65, 31}, {257, 5}}) {
            for (String kind : List.of("rms", "layer")) {
                for (DType t : List.of(DType.F32, DType.BF16, DType.F16)) {
                    Shape s = Shape.of(dims);
                    tests.add(DynamicTest.dynamicTest(kind + " " + t.text() + s + " seed=" + SEED, () -> check(s, kind, t)));
                }
            }
        }
        return tests.stream();
    }

    static void check(Shape s, String kind, DType t) {
        TensorType in = TensorType.of(t, s);
        TensorType out = TensorType.of(t, Shape.of(s.last()));
        Graph g = IrParser.parse("graph @g {\n  %x = input {name=\"x\"} : " + in + "\n  %dy = input {name=\"dy\"} : " + in
                + "\n  %w = norm_weight_grad(%x, %dy) {eps=1.0E-5, kind=\"" + kind + "\"} : " + out + "\n  return %w\n}\n");
        // x with an offset and a spread, so that layer's centring matters
        Tensor x = Tensor.allocate(in);
        long kx = Philox.key(SEED, "x" + s + kind + t);
        for (long i = 0; i < x.numel(); i++) {
            x.set(i, 0.7f + 1.3f * Philox.normal(kx, i));
        }
        Tensor dy = Philox.normal(Tensor.allocate(in), Philox.key(SEED, "dy" + s + kind + t), 1f);
        RefTensor ref = ReferenceInterpreter.run(g, Map.of("x", x, "dy", dy)).values().iterator().next();
        Tensor w = Tensor.allocate(out).poison();
        NormWeightGrad.run(View.of(x), View.of(dy), kind.equals("layer"), 1e-5f, View.of(w));
        if (kind.equals("layer") && s.last() == 1) {
            // one column: x − mean is 0, so x̂ and the gradient are exactly 0 (written, not NaN)
            assertEquals(0.0, w.get(0), kind + " " + t.text() + s);
            return;
        }
        Diff.assertClose(w, ref, t == DType.F32 ? 1e-5 : 1e-2, kind + " " + t.text() + s);
    }
}
