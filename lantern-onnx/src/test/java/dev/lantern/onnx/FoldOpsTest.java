package dev.lantern.onnx;

import dev.lantern.ir.Node;
import dev.lantern.tensor.Tensor;
import onnx.Onnx.GraphProto;
import onnx.Onnx.ModelProto;
import onnx.Onnx.NodeProto;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static dev.lantern.onnx.Onnx.attr;
import static dev.lantern.onnx.Onnx.floats;
import static dev.lantern.onnx.Onnx.int64s;
import static dev.lantern.onnx.Onnx.node;
import static dev.lantern.onnx.Onnx.node2;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** Values folded at import, read back from the param the importer makes of a folded graph output. */
class FoldOpsTest {
    /** The folded graph output of {@code nodes} over the given initializers, as floats. */
    private static float[] fold(GraphProto.Builder g, NodeProto... nodes) {
        for (NodeProto n : nodes) {
            g.addNode(n);
        }
        ModelProto m = Onnx.model(18, g.setName("fold").addOutput(Onnx.floatValue("y")).build());
        ImportedModel im = OnnxImporter.importModel(m, Map.of());
        Node out = im.graph().node(im.graph().outputs().getFirst());
        String name = out.attrs().getString("name", "");
        Tensor t = im.params().get(name);
        if (t == null) { // a single value is a scalar constant (reshaped)
            Node src = out.inputs().isEmpty() ? out : im.graph().node(out.input(0));
            return new float[] {(float) src.attrs().getDouble("value", Double.NaN)};
        }
        return t.toFloats();
    }

    @Test
    void cumSumForwardExclusiveAndReverse() {
        GraphProto.Builder g = GraphProto.newBuilder().addInitializer(floats("x", new long[] {2, 3}, new float[] {1, 2, 3, 4, 5, 6}))
                .addInitializer(int64s("ax", 1).toBuilder().clearDims().build());
        assertArrayEquals(new float[] {1, 3, 6, 4, 9, 15}, fold(g.clone(), node2("CumSum", "x", "ax", "y")));
        assertArrayEquals(new float[] {0, 1, 3, 0, 4, 9}, fold(g.clone(), node2("CumSum", "x", "ax", "y", attr("exclusive", 1L))));
        assertArrayEquals(new float[] {6, 5, 3, 15, 11, 6}, fold(g.clone(), node2("CumSum", "x", "ax", "y", attr("reverse", 1L))));
    }

    @Test
    void gatherElementsAlongAnAxis() {
        GraphProto.Builder g = GraphProto.newBuilder().addInitializer(floats("x", new long[] {2, 3}, new float[] {1, 2, 3, 4, 5, 6}))
                .addInitializer(int64s("i", 2, 0, -1, 1).toBuilder().clearDims().addDims(2).addDims(2).build());
        assertArrayEquals(new float[] {3, 1, 6, 5}, fold(g, node2("GatherElements", "x", "i", "y", attr("axis", 1L))));
    }

    /** A rotary table: cos(positions · inverse frequency), from Range, Cast, Mul and Cos. */
    @Test
    void rotaryTablesFold() {
        GraphProto.Builder g = GraphProto.newBuilder()
                .addInitializer(int64s("a", 0).toBuilder().clearDims().build())
                .addInitializer(int64s("b", 4).toBuilder().clearDims().build())
                .addInitializer(int64s("d", 1).toBuilder().clearDims().build())
                .addInitializer(floats("f", new long[] {1}, new float[] {0.5f}));
        float[] got = fold(g, Onnx.node("Range", new String[] {"a", "b", "d"}, new String[] {"r"}),
                node("Cast", "r", "rf", attr("to", 1L)), node2("Mul", "rf", "f", "ph"), node("Cos", "ph", "y"));
        for (int p = 0; p < 4; p++) {
            assertEquals((float) Math.cos(p * 0.5), got[p], 1e-7);
        }
    }

    @Test
    void isNanAndWhereFold() {
        GraphProto.Builder g = GraphProto.newBuilder()
                .addInitializer(floats("x", new long[] {3}, new float[] {1, Float.NaN, -2}))
                .addInitializer(floats("z", new long[] {1}, new float[] {0}));
        assertArrayEquals(new float[] {1, 0, -2}, fold(g, node("IsNaN", "x", "n"),
                Onnx.node("Where", new String[] {"n", "z", "x"}, new String[] {"y"})));
    }
}
