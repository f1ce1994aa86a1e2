package dev.lantern.reference;

import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** The oracle checked against values worked out by hand or taken from tables. */
class ReferenceInterpreterTest {
    static Tensor t(Shape s, float... v) {
        return Tensor.of(DType.F32, s, v);
    }

    static RefTensor run1(String ir, Map<String, Tensor> in) {
        Graph g = IrParser.parse(ir);
        return ReferenceInterpreter.run(g, in).values().iterator().next();
    }

    @Test
    void erfMatchesTables() {
        assertEquals(0.5204998778130465, RefMath.erf(0.5), 1e-15);
        assertEquals(0.8427007929497149, RefMath.erf(1.0), 1e-15);
        assertEquals(-0.9953222650189527, RefMath.erf(-2.0), 1e-15);
        assertEquals(0.9999992569016276, RefMath.erf(3.5), 1e-15);
        assertEquals(0.0, RefMath.erf(0.0), 0);
    }

    @Test
    void causalSoftmaxMasksLaterKeys() {
        RefTensor r = run1("""
                graph @g {
                  %x = input {name="x"} : f32[2,2]
                  %y = softmax(%x) {causal=true, scale=2.0} : f32[2,2]
                  return %y
                }
                """, Map.of("x", t(Shape.of(2, 2), 1, 2, 1.5f, 2)));
        double e = 1 / (1 + Math.exp(1)); // softmax([3, 4])[0]
        assertArrayEquals(new double[] {1, 0, e, 1 - e}, r.data(), 1e-15);
    }

    @Test
    void ropeRotatesHalves() {
        RefTensor r = run1("""
                graph @g {
                  %x = input {name="x"} : f32[1,1,2,4]
                  %y = rope(%x) {base=10000.0} : f32[1,1,2,4]
                  return %y
                }
                """, Map.of("x", t(Shape.of(1, 1, 2, 4), 9, 9, 9, 9, 1, 2, 3, 4)));
        // position 1: θ0 = 1, θ1 = 10000^(-1/2) = 0.01
        double c0 = Math.cos(1);
        double s0 = Math.sin(1);
        double c1 = Math.cos(0.01);
        double s1 = Math.sin(0.01);
        assertArrayEquals(new double[] {9, 9, 9, 9, 1 * c0 - 3 * s0, 2 * c1 - 4 * s1, 3 * c0 + 1 * s0, 4 * c1 + 2 * s1}, r.data(), 1e-12);
    }

    @Test
    void stridedInputReadsAView() {
        // storage 0..5 read as (2, 3) with strides (1, 2): element (i, j) = storage[i + 2j]
        RefTensor r = run1("""
                graph @g {
                  %x = input {name="x"} : f32[2,3]@[1,2]
                  %w = param {name="w"} : f32[3,1]
                  %y = matmul(%x, %w) : f32[2,1]
                  return %y
                }
                """, Map.of("x", t(Shape.of(6), 0, 1, 2, 3, 4, 5), "w", t(Shape.of(3, 1), 1, 10, 100)));
        // rows [0, 2, 4] and [1, 3, 5]
        assertArrayEquals(new double[] {0 + 20 + 400, 1 + 30 + 500}, r.data(), 0);
    }

    @Test
    void layerNormAndCastAreExact() {
        RefTensor r = run1("""
                graph @g {
                  %x = input {name="x"} : f32[1,4]
                  %w = param {name="w"} : f32[4]
                  %b = param {name="b"} : f32[4]
                  %y = layer_norm(%x, %w, %b) {eps=0.0} : f32[1,4]
                  %z = cast(%y) {to="bf16"} : bf16[1,4]
                  return %z
                }
                """, Map.of("x", t(Shape.of(1, 4), 1, 2, 3, 4), "w", t(Shape.of(4), 1, 1, 1, 2), "b", t(Shape.of(4), 0, 0, 0, 0.5f)));
        double sd = Math.sqrt(1.25);
        double[] want = {-1.5 / sd, -0.5 / sd, 0.5 / sd, 2 * 1.5 / sd + 0.5};
        for (int i = 0; i < 4; i++) {
            want[i] = dev.lantern.tensor.Half.roundBf16((float) want[i]);
        }
        assertArrayEquals(want, r.data(), 0);
    }

    @Test
    void attentionEqualsItsPrimitiveForm() {
        String ir = """
                graph @g {
                  %q = input {name="q"} : f32[1,1,3,2]
                  %k = input {name="k"} : f32[1,1,3,2]
                  %v = input {name="v"} : f32[1,1,3,2]
                  %a = attention(%q, %k, %v) {causal=true, scale=0.5} : f32[1,1,3,2]
                  %s = matmul(%q, %k) {transpose_b=true} : f32[1,1,3,3]
                  %p = softmax(%s) {causal=true, scale=0.5} : f32[1,1,3,3]
                  %o = matmul(%p, %v) : f32[1,1,3,2]
                  return %a, %o
                }
                """;
        Shape s = Shape.of(1, 1, 3, 2);
        Map<String, RefTensor> r = ReferenceInterpreter.run(IrParser.parse(ir), Map.of(
                "q", t(s, 1, -2, 0.5f, 3, 2, 1), "k", t(s, -1, 1, 2, 0.25f, 0, 3), "v", t(s, 1, 2, 3, 4, 5, 6)));
        assertArrayEquals(r.get("o").data(), r.get("a").data(), 1e-15);
        assertArrayEquals(new double[] {1, 2}, java.util.Arrays.copyOf(r.get("a").data(), 2), 0); // first query sees only key 0
    }

    /**
     * Batched matmul (broadcast batch, each transpose) equals the textbook dot-product loop bit for
     * bit: the reference's loop order was changed for speed and must not change a single sum.
     */
    @Test
    void matmulIsTheTextbookSumBitForBit() {
        java.util.SplittableRandom r = new java.util.SplittableRandom(12);
        int m = 5;
        int k = 7;
        int n = 9;
        for (boolean ta : new boolean[] {false, true}) {
            for (boolean tb : new boolean[] {false, true}) {
                RefTensor a = new RefTensor(ta ? Shape.of(3, k, m) : Shape.of(3, m, k), r.doubles(3L * m * k, -1, 1).toArray());
                RefTensor b = new RefTensor(tb ? Shape.of(1, n, k) : Shape.of(1, k, n), r.doubles((long) k * n, -1, 1).toArray());
                double[] got = RefOps.matmul(a, b, ta, tb, Shape.of(3, m, n)).data();
                for (int bi = 0; bi < 3; bi++) {
                    for (int i = 0; i < m; i++) {
                        for (int j = 0; j < n; j++) {
                            double acc = 0;
                            for (int p = 0; p < k; p++) {
                                acc += a.data()[bi * m * k + (ta ? p * m + i : i * k + p)] * b.data()[tb ? j * k + p : p * n + j];
                            }
                            assertEquals(acc, got[(bi * m + i) * n + j], 0, "ta=" + ta + " tb=" + tb);
                        }
                    }
                }
            }
        }
    }
}
