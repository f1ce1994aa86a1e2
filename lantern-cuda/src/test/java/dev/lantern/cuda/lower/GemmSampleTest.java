package dev.lantern.cuda.lower;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.engine.DemoMetrics;
import dev.lantern.frontend.Model;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Shape;
import dev.lantern.reference.RefTensor;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Tensor;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The GPU tier's host GEMM check on the host alone: it picks a block's q and MLP-down
 * projections, agrees with the float64 reference's own products (rounded to bf16, as a device
 * writes them), and fails on a product with one wrong row or an unwritten (NaN) element.
 */
class GemmSampleTest {
    private static final BlockConfig CFG = new BlockConfig("sample", 2, 9, 96, 3, 37, true);

    @Test
    void picksTheFirstAndTheLastProjection() {
        Graph g = TransformerBlock.build(CFG, DType.BF16).graph();
        List<GemmSample> s = GemmSample.of(g);
        assertEquals(2, s.size());
        assertEquals(Shape.of(96, 96), g.type(s.get(0).w()).shape(), "the q projection");
        assertEquals(37, g.type(s.get(1).w()).shape().dim(0), "the down projection reads the mlp width");
        Graph with = GemmSample.withOutputs(g, s);
        assertEquals(g.outputs().getFirst(), with.outputs().getFirst(), "the block's output stays first");
        assertEquals(5, with.outputs().size());
    }

    @Test
    void agreesWithTheReferenceAndCatchesAWrongRow() {
        Model m = TransformerBlock.build(CFG, DType.BF16);
        Map<String, Tensor> feeds = new LinkedHashMap<>(m.parameters(5));
        feeds.putAll(DemoMetrics.inputs(m.graph(), 5));
        Map<String, RefTensor> all = ReferenceInterpreter.runAll(m.graph(), feeds);
        for (GemmSample s : GemmSample.of(m.graph())) {
            Tensor a = bf16(all.get(s.a()));
            Tensor w = bf16(all.get(s.w()));
            // the product of the bf16 operands, rounded to bf16: what a correct device GEMM writes
            Tensor out = bf16(matmul(a, w));
            double ok = GemmSample.relErr(a, w, out, 4, 1);
            assertTrue(ok > 0 && ok < 5e-3, "bf16 rounding only: " + ok);
            long n = w.shape().dim(1);
            long last = out.numel() / n - 1;
            for (long j = 0; j < n; j++) {
                out.set(last * n + j, -out.get(last * n + j)); // the last row is always sampled
            }
            assertTrue(GemmSample.relErr(a, w, out, 4, 1) > 0.3, "a negated row must show");
            out.set(0, Float.NaN);
            assertThrows(AssertionError.class, () -> GemmSample.relErr(a, w, out, 4, 1));
        }
    }

    private static Tensor bf16(RefTensor r) {
        return Tensor.of(DType.BF16, r.shape(), r.toFloats());
    }

    private static RefTensor matmul(Tensor a, Tensor w) {
        int k = w.shape().dim(0);
        int n = w.shape().dim(1);
        int m = Math.toIntExact(a.numel() / k);
        double[] out = new double[m * n];
        for (int i = 0; i < m; i++) {
            for (int p = 0; p < k; p++) {
                for (int j = 0; j < n; j++) {
                    out[i * n + j] += (double) a.get((long) i * k + p) * w.get((long) p * n + j);
                }
            }
        }
        int[] dims = a.shape().dims().clone();
        dims[dims.length - 1] = n;
        return new RefTensor(Shape.of(dims), out);
    }
}
