package dev.lantern.onnx;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import dev.lantern.ir.DType;
import dev.lantern.ir.IndexOutOfRangeException;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Tensor;
import onnx.Onnx.GraphProto;
import onnx.Onnx.ModelProto;
import onnx.Onnx.TensorProto;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import static dev.lantern.onnx.Onnx.attr;
import static dev.lantern.onnx.Onnx.floatValue;
import static dev.lantern.onnx.Onnx.floats;
import static dev.lantern.onnx.Onnx.node;
import static dev.lantern.onnx.Onnx.node2;
import static dev.lantern.onnx.Onnx.random;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ONNX Gather with run-time indices becomes Lantern's gather: a token embedding (int64 ids, symbolic batch and
 * sequence) into MatMul and Softmax, and a gather along axis 1 of a computed value with int32 ids and with
 * several constant ids; each against ONNX Runtime's Java API and against float64 within 1e-5.
 */
class OnnxGatherTest {
    private static final int VOCAB = 37;
    private static final int HIDDEN = 24;
    private static OrtEnvironment env;

    @BeforeAll
    static void start() {
        env = OrtEnvironment.getEnvironment();
    }

    /** ids (batch, seq) int64 -> Gather(wte) -> MatMul(head) -> Softmax(-1): y (batch, seq, 11). */
    static ModelProto embedding(long seed) {
        Random r = new Random(seed);
        GraphProto g = GraphProto.newBuilder().setName("embedding")
                .addInput(Onnx.value("ids", TensorProto.DataType.INT64_VALUE, "batch", "seq"))
                .addOutput(floatValue("y", "batch", "seq", 11))
                .addInitializer(floats("wte", new long[] {VOCAB, HIDDEN}, random(r, VOCAB * HIDDEN, 1.0)))
                .addInitializer(floats("head", new long[] {HIDDEN, 11}, random(r, HIDDEN * 11, 0.3)))
                .addNode(node2("Gather", "wte", "ids", "h"))
                .addNode(node2("MatMul", "h", "head", "logits"))
                .addNode(node("Softmax", "logits", "y", attr("axis", -1L)))
                .build();
        return Onnx.model(13, g);
    }

    /** x (2, 9, 5) -> Tanh -> Gather(axis 1, ids int32 (4)) and Gather(axis 1, constant [2, 0, -1]) -> Concat(axis 1). */
    static ModelProto alongAxis1() {
        GraphProto g = GraphProto.newBuilder().setName("axis1")
                .addInput(floatValue("x", 2, 9, 5))
                .addInput(Onnx.value("ids", TensorProto.DataType.INT32_VALUE, 4))
                .addOutput(floatValue("y", 2, 7, 5))
                .addInitializer(Onnx.int64s("k", 2, 0, -1))
                .addNode(node("Tanh", "x", "t"))
                .addNode(Onnx.node("Gather", new String[] {"t", "ids"}, new String[] {"a"}, attr("axis", 1L)))
                .addNode(Onnx.node("Gather", new String[] {"t", "k"}, new String[] {"b"}, attr("axis", 1L)))
                .addNode(Onnx.node("Concat", new String[] {"a", "b"}, new String[] {"y"}, attr("axis", 1L)))
                .build();
        return Onnx.model(13, g);
    }

    static Tensor ids(DType d, long seed, int n, int... dims) {
        Random r = new Random(seed);
        Tensor t = Tensor.allocate(d, Shape.of(dims));
        for (long i = 0; i < t.numel(); i++) {
            t.set(i, r.nextInt(2 * n) - n); // [-n, n): negative ids count from the end
        }
        return t;
    }

    @Test
    void tokenEmbeddingMatchesOnnxRuntimeAndFloat64() throws OrtException {
        for (int[] shape : new int[][] {{2, 7}, {1, 16}}) {
            long seed = 0xE3BEDL + shape[1];
            ModelProto model = embedding(seed);
            Tensor ids = ids(DType.I64, seed + 1, VOCAB, shape);
            long[] dims = {shape[0], shape[1]};
            long[] raw = new long[(int) ids.numel()];
            for (int i = 0; i < raw.length; i++) {
                raw[i] = (long) ids.get(i);
            }
            double[] ort;
            try (OrtSession s = env.createSession(model.toByteArray(), new OrtSession.SessionOptions());
                 OnnxTensor in = OnnxTensor.createTensor(env, LongBuffer.wrap(raw), dims);
                 OrtSession.Result res = s.run(Map.of("ids", in))) {
                ort = doubles(((OnnxTensor) res.get(0)).getFloatBuffer());
            }
            ImportedModel m = OnnxImporter.importModel(model, Map.of("ids", dims));
            assertEquals(1, m.graph().nodes().stream().filter(n -> n.op() == Op.GATHER).count(), m.graph().toString());
            double[] got = Runs.cpu(m, Map.of("ids", ids));
            double[] ref = Runs.reference(m, Map.of("ids", ids));
            assertTrue(Runs.relErr(got, ort) <= 1e-5, "Lantern vs ONNX Runtime " + Runs.relErr(got, ort));
            assertTrue(Runs.relErr(got, ref) <= 1e-5, "Lantern vs float64 " + Runs.relErr(got, ref));
            assertTrue(Runs.relErr(ort, ref) <= 1e-5, "ONNX Runtime vs float64 " + Runs.relErr(ort, ref));
        }
    }

    @Test
    void gatherAlongAxis1OfAValueMatchesOnnxRuntime() throws OrtException {
        ModelProto model = alongAxis1();
        Tensor x = Runs.input(91, 2, 9, 5);
        Tensor ids = ids(DType.I32, 92, 9, 4);
        int[] raw = new int[4];
        for (int i = 0; i < 4; i++) {
            raw[i] = (int) ids.get(i);
        }
        double[] ort;
        try (OrtSession s = env.createSession(model.toByteArray(), new OrtSession.SessionOptions());
             OnnxTensor xi = OnnxTensor.createTensor(env, FloatBuffer.wrap(x.toFloats()), new long[] {2, 9, 5});
             OnnxTensor ii = OnnxTensor.createTensor(env, IntBuffer.wrap(raw), new long[] {4});
             OrtSession.Result res = s.run(Map.of("x", xi, "ids", ii))) {
            ort = doubles(((OnnxTensor) res.get(0)).getFloatBuffer());
        }
        ImportedModel m = OnnxImporter.importModel(model, Map.of());
        assertEquals(2, m.graph().nodes().stream().filter(n -> n.op() == Op.GATHER).count(), m.graph().toString());
        Map<String, Tensor> in = new HashMap<>(Map.of("x", x, "ids", ids));
        double[] got = Runs.cpu(m, in);
        assertTrue(Runs.relErr(got, ort) <= 1e-5, "Lantern vs ONNX Runtime " + Runs.relErr(got, ort));
        assertTrue(Runs.relErr(got, Runs.reference(m, in)) <= 1e-5, "Lantern vs float64");
    }

    @Test
    void idsOutsideTheVocabularyAreTypedErrors() {
        ImportedModel m = OnnxImporter.importModel(embedding(5), Map.of("ids", new long[] {1, 3}));
        Tensor ids = Tensor.allocate(DType.I64, Shape.of(1, 3));
        ids.set(0, 3);
        ids.set(1, VOCAB); // one past the last row
        IndexOutOfRangeException e = assertThrows(IndexOutOfRangeException.class, () -> Runs.cpu(m, Map.of("ids", ids)));
        assertTrue(e.getMessage().contains("id " + VOCAB + " at position 1"), e.getMessage());
        assertThrows(IndexOutOfRangeException.class, () -> Runs.reference(m, Map.of("ids", ids)));
    }

    @Test
    void constantIdsOutsideTheAxisAreImportErrors() {
        ModelProto bad = Onnx.model(13, GraphProto.newBuilder().setName("bad")
                .addInput(floatValue("x", 2, 9, 5)).addOutput(floatValue("y"))
                .addInitializer(Onnx.int64s("k", 2, 9))
                .addNode(Onnx.node("Gather", new String[] {"x", "k"}, new String[] {"y"}, attr("axis", 1L))).build());
        String msg = assertThrows(OnnxImportException.class, () -> OnnxImporter.importModel(bad, Map.of())).getMessage();
        assertTrue(msg.contains("index 9 is outside axis 1"), msg);
    }

    private static double[] doubles(FloatBuffer b) {
        double[] d = new double[b.remaining()];
        for (int i = 0; i < d.length; i++) {
            d[i] = b.get();
        }
        return d;
    }
}
