package dev.lantern.onnx;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.tensor.Tensor;
import onnx.Onnx.GraphProto;
import onnx.Onnx.ModelProto;
import org.junit.jupiter.api.Test;
import java.nio.FloatBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import static dev.lantern.onnx.Onnx.attr;
import static dev.lantern.onnx.Onnx.floatValue;
import static dev.lantern.onnx.Onnx.ints;
import static dev.lantern.onnx.Onnx.node;
import static dev.lantern.onnx.Onnx.node2;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * transformers' repeat_kv as torch.onnx.export writes it (Unsqueeze, Expand, Reshape of K and V)
 * in front of an attention: imported, the Expand is a gather of zero ids along the new axis, and
 * fusion drops it, so the attention reads the 2 K/V heads for its 6 query heads in place.
 * Against ONNX Runtime and the float64 reference of the imported graph, 1e-5 relative.
 */
class RepeatKvAttentionTest {
    static final int B = 2;
    static final int H = 6;
    static final int HK = 2;
    static final int S = 7;
    static final int T = 9;
    static final int D = 8;

    static ModelProto model() {
        GraphProto.Builder g = GraphProto.newBuilder().setName("repeat_kv")
                .addInput(floatValue("q", B, H, S, D))
                .addInput(floatValue("k", B, HK, T, D))
                .addInput(floatValue("v", B, HK, T, D))
                .addOutput(floatValue("y", B, H, S, D))
                .addInitializer(Onnx.int64s("axes2", 2))
                .addInitializer(Onnx.int64s("target", B, HK, H / HK, T, D))
                .addInitializer(Onnx.int64s("heads", B, H, T, D));
        for (String x : List.of("k", "v")) {
            g.addNode(node2("Unsqueeze", x, "axes2", x + "5"))
                    .addNode(node2("Expand", x + "5", "target", x + "e"))
                    .addNode(node2("Reshape", x + "e", "heads", x + "r"));
        }
        g.addNode(node("Transpose", "kr", "kt", ints("perm", 0, 1, 3, 2)))
                .addNode(node2("MatMul", "q", "kt", "s"))
                .addNode(node("Softmax", "s", "p", attr("axis", -1L)))
                .addNode(node2("MatMul", "p", "vr", "y"));
        return Onnx.model(17, g.build());
    }

    @Test
    void repeatedKvHeadsAreReadInPlaceAndMatchOnnxRuntime() throws Exception {
        ImportedModel m = OnnxImporter.importModel(model(), Map.of());
        assertTrue(m.graph().nodes().stream().anyMatch(n -> n.op() == Op.GATHER), "the Expand imports as a gather:\n" + m.graph());
        CompiledModel c = Compiler.compile(m.graph(), CompileOptions.defaults());
        Node att = c.graph().nodes().stream().filter(n -> n.op() == Op.ATTENTION).findFirst()
                .orElseThrow(() -> new AssertionError("no attention:\n" + c.graph()));
        assertEquals(HK, c.graph().type(att.input(1)).shape().dim(1), "k with its own heads: " + att);
        assertEquals(HK, c.graph().type(att.input(2)).shape().dim(1), "v with its own heads: " + att);
        assertTrue(c.graph().nodes().stream().noneMatch(n -> n.op() == Op.GATHER), "no head copies:\n" + c.graph());

        Map<String, Tensor> in = new HashMap<>();
        in.put("q", Runs.input(1, B, H, S, D));
        in.put("k", Runs.input(2, B, HK, T, D));
        in.put("v", Runs.input(3, B, HK, T, D));
        double[] got = Runs.cpu(m, in);
        double vs64 = Runs.relErr(got, Runs.reference(m, in));
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        try (OrtSession s = env.createSession(model().toByteArray(), new OrtSession.SessionOptions());
             OnnxTensor q = tensor(env, in.get("q"));
             OnnxTensor k = tensor(env, in.get("k"));
             OnnxTensor v = tensor(env, in.get("v"));
             OrtSession.Result res = s.run(Map.of("q", q, "k", k, "v", v))) {
            FloatBuffer fb = ((OnnxTensor) res.get("y").orElseThrow()).getFloatBuffer();
            double[] ort = new double[fb.remaining()];
            for (int i = 0; i < ort.length; i++) {
                ort[i] = fb.get(i);
            }
            double vsOrt = Runs.relErr(got, ort);
            assertTrue(vs64 <= 1e-5 && vsOrt <= 1e-5, "float64 " + vs64 + ", ONNX Runtime " + vsOrt);
        }
    }

    /**
     * The LLaMA fixture's repeat_kv (2 K/V heads, 4 query heads) imports as gathers of a constant 0
     * (which the repeat rule reads), and once its attention is fused, that attention reads the 2 heads.
     */
    @Test
    void llamaFixtureRepeatIsRecognisable() throws Exception {
        java.nio.file.Path dir = ModelFixturesTest.folder("llama");
        ImportedModel m = OnnxImporter.importFile(dir.resolve("model.onnx"), Map.of("input_ids", new long[] {2, 16}));
        List<Node> repeats = m.graph().nodes().stream().filter(n -> n.op() == Op.GATHER && n.attrs().getInt("axis", 0) == 2).toList();
        assertEquals(4, repeats.size(), "k and v of two layers:\n" + m.graph());
        for (Node r : repeats) {
            Node ids = m.graph().node(r.input(1));
            assertEquals(Op.CONSTANT, ids.op(), "zero ids as a filled constant: " + ids);
            assertEquals(0.0, ids.attrs().getDouble("value", Double.NaN));
        }
        CompiledModel c = Compiler.compile(m.graph(), CompileOptions.defaults());
        for (Node a : c.graph().nodes().stream().filter(n -> n.op() == Op.ATTENTION).toList()) {
            assertEquals(2, c.graph().type(a.input(1)).shape().dim(1), "fused attention reads the 2 K/V heads: " + a);
        }
    }

    private static OnnxTensor tensor(OrtEnvironment env, Tensor t) throws Exception {
        long[] dims = java.util.Arrays.stream(t.shape().dims()).asLongStream().toArray();
        return OnnxTensor.createTensor(env, FloatBuffer.wrap(t.toFloats()), dims);
    }
}
