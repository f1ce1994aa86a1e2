package dev.lantern.onnx;

import static dev.lantern.onnx.Onnx.floatValue;
import static dev.lantern.onnx.Onnx.floats;
import static dev.lantern.onnx.Onnx.ints;
import static dev.lantern.onnx.Onnx.node;
import static dev.lantern.onnx.Onnx.node2;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.Device;
import dev.lantern.Lantern;
import dev.lantern.Session;
import dev.lantern.Weights;
import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Tensor;
import java.util.Map;
import java.util.Random;
import onnx.Onnx.GraphProto;
import onnx.Onnx.ModelProto;
import org.junit.jupiter.api.Test;

/**
 * A weight too large to transpose at import time (GPT-2's tied head: {@code Transpose(lm_head.weight)})
 * stays a parameter and is permuted at run time, instead of the import being refused; checked
 * against a float64 product on the host with an import limit far below the weight's size.
 */
class LargeWeightMovementTest {
    @Test
    void aTransposeOfALargeWeightRunsAtRunTime() {
        Random r = new Random(11);
        int vocab = 37;
        int hidden = 24;
        float[] w = Onnx.random(r, vocab * hidden, 0.2);
        GraphProto g = GraphProto.newBuilder().setName("head")
                .addInput(floatValue("x", 3, hidden))
                .addInitializer(floats("head.weight", new long[] {vocab, hidden}, w))
                .addNode(node("Transpose", "head.weight", "wt", ints("perm", 1, 0)))
                .addNode(node2("MatMul", "x", "wt", "logits"))
                .addOutput(floatValue("logits", 3, vocab)).build();
        ModelProto model = Onnx.model(17, g);
        ImportLimits tiny = new ImportLimits(Integer.MAX_VALUE, Integer.MAX_VALUE, 8, 64, 1 << 20); // 64 < 37 x 24
        ImportedModel m = OnnxImporter.importModel(model, Map.of("x", new long[] {3, hidden}), null, tiny);
        float[] x = Onnx.random(r, 3 * hidden, 1.0);
        try (Session s = Lantern.compile(m.graph()).load(Device.cpu(), Weights.of(m.params()))) {
            double[] got = s.run(Map.of("x", Tensor.of(DType.F32, Shape.of(3, hidden), x))).values().iterator().next().toDoubles();
            double num = 0;
            double den = 0;
            for (int i = 0; i < 3; i++) {
                for (int v = 0; v < vocab; v++) {
                    double ref = 0;
                    for (int h = 0; h < hidden; h++) {
                        ref += (double) x[i * hidden + h] * w[v * hidden + h];
                    }
                    num += (got[i * vocab + v] - ref) * (got[i * vocab + v] - ref);
                    den += ref * ref;
                }
            }
            double e = Math.sqrt(num / den);
            assertTrue(e < 1e-5, "rel err " + e);
        }
    }
}
