package dev.lantern.onnx;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import dev.lantern.Device;
import dev.lantern.Lantern;
import dev.lantern.Program;
import dev.lantern.RunMode;
import dev.lantern.Session;
import dev.lantern.Weights;
import dev.lantern.engine.CompileOptions;
import dev.lantern.ir.DType;
import dev.lantern.ir.IndexOutOfRangeException;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Tensor;
import onnx.Onnx.GraphProto;
import onnx.Onnx.ModelProto;
import onnx.Onnx.TensorProto;
import org.junit.jupiter.api.Test;

import java.nio.FloatBuffer;
import java.nio.LongBuffer;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static dev.lantern.onnx.Onnx.attr;
import static dev.lantern.onnx.Onnx.floatValue;
import static dev.lantern.onnx.Onnx.node;
import static dev.lantern.onnx.Onnx.node2;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The run-time forms a padding mask and grouped-query attention need (MaskOps, MovementOps.broadcastTo): an
 * int64 attention_mask cast to bool, And with a constant, Where(mask, 0, finfo.min) added to scores before a
 * Softmax, GatherND at constant indices, and Expand of a run-time tensor; against float64 written from the
 * ONNX semantics and against ONNX Runtime, 1e-5 relative. These failed to import before (typed errors).
 */
class MaskOpsTest {
    private static final long[] MASK = {1, 1, 0, 1, 1, 0, 1, 1};
    private static final long[][] ND = {{1, 3}, {0, 2}, {1, 1}};

    static ModelProto model() {
        TensorProto.Builder onesB = TensorProto.newBuilder().setName("ones_b").setDataType(TensorProto.DataType.BOOL_VALUE)
                .addDims(1).addDims(1).addDims(4);
        for (int i = 0; i < 4; i++) {
            onesB.addInt32Data(1);
        }
        TensorProto.Builder idx = TensorProto.newBuilder().setName("idx").setDataType(TensorProto.DataType.INT64_VALUE).addDims(3).addDims(2);
        for (long[] t : ND) {
            idx.addInt64Data(t[0]).addInt64Data(t[1]);
        }
        GraphProto g = GraphProto.newBuilder().setName("masks")
                .addInput(floatValue("scores", "batch", 3, 4))
                .addInput(Onnx.value("mask", TensorProto.DataType.INT64_VALUE, "batch", 4))
                .addInput(floatValue("kv", "batch", 1, 4))
                .addOutput(floatValue("y", "batch", 3, 4))
                .addOutput(floatValue("z", "batch", 3, 4))
                .addOutput(floatValue("w", 3))
                .addInitializer(Onnx.int64s("axes1", 1))
                .addInitializer(onesB.build())
                .addInitializer(Onnx.scalar("zero", 0f))
                .addInitializer(Onnx.scalar("one", 1f))
                .addInitializer(Onnx.scalar("fmin", -Float.MAX_VALUE))
                .addInitializer(Onnx.int64s("target", 2, 3, 4))
                .addInitializer(idx.build())
                .addNode(node("Cast", "mask", "mb", attr("to", (long) TensorProto.DataType.BOOL_VALUE)))
                .addNode(node2("Unsqueeze", "mb", "axes1", "mbu"))
                .addNode(node2("And", "ones_b", "mbu", "keep"))
                .addNode(Onnx.node("Where", new String[] {"keep", "zero", "fmin"}, new String[] {"bias"}))
                .addNode(node2("Add", "scores", "bias", "s2"))
                .addNode(node("Softmax", "s2", "y", attr("axis", -1L)))
                .addNode(node2("Expand", "kv", "target", "z"))
                .addNode(node2("GatherND", "mb", "idx", "g"))
                .addNode(Onnx.node("Where", new String[] {"g", "one", "zero"}, new String[] {"w"}))
                .build();
        return Onnx.model(17, g);
    }

    static Tensor floats(Random r, int... dims) {
        return Runs.input(r.nextLong(), dims);
    }

    static Tensor longs(long[] v, int... dims) {
        Tensor t = Tensor.allocate(DType.I64, Shape.of(dims));
        for (int i = 0; i < v.length; i++) {
            t.segment().setAtIndex(java.lang.foreign.ValueLayout.JAVA_LONG, i, v[i]);
        }
        return t;
    }

    static Map<String, Tensor> run(Map<String, Tensor> in) {
        ImportedModel m = OnnxImporter.importModel(model(), Map.of("scores", new long[] {2, 3, 4}, "mask", new long[] {2, 4},
                "kv", new long[] {2, 1, 4}));
        Program p = Lantern.compile(m.graph(), CompileOptions.defaults());
        try (Session s = p.load(Device.cpu(), Weights.of(m.params()), RunMode.COMPILED)) {
            assertEquals(List.of("y", "z", "w"), p.outputNames());
            return s.run(in);
        }
    }

    @Test
    void paddingMaskGatherNdAndExpandMatchFloat64AndOnnxRuntime() throws Exception {
        Random r = new Random(14);
        Tensor scores = floats(r, 2, 3, 4);
        Tensor kv = floats(r, 2, 1, 4);
        Tensor mask = longs(MASK, 2, 4);
        Map<String, Tensor> got = run(Map.of("scores", scores, "mask", mask, "kv", kv));

        double[] y = new double[24];
        double[] z = new double[24];
        for (int b = 0; b < 2; b++) {
            for (int q = 0; q < 3; q++) {
                double[] e = new double[4];
                double sum = 0;
                for (int k = 0; k < 4; k++) {
                    double s = scores.get((b * 3 + q) * 4 + k) + (MASK[b * 4 + k] != 0 ? 0 : -Float.MAX_VALUE);
                    e[k] = s;
                }
                double max = java.util.Arrays.stream(e).max().orElseThrow();
                for (int k = 0; k < 4; k++) {
                    e[k] = Math.exp(e[k] - max);
                    sum += e[k];
                }
                for (int k = 0; k < 4; k++) {
                    y[(b * 3 + q) * 4 + k] = e[k] / sum;
                    z[(b * 3 + q) * 4 + k] = kv.get(b * 4 + k);
                }
            }
        }
        double[] w = new double[ND.length];
        for (int i = 0; i < ND.length; i++) {
            w[i] = MASK[(int) (ND[i][0] * 4 + ND[i][1])];
        }
        Map<String, double[]> want = Map.of("y", y, "z", z, "w", w);

        OrtEnvironment env = OrtEnvironment.getEnvironment();
        try (OrtSession s = env.createSession(model().toByteArray(), new OrtSession.SessionOptions());
             OnnxTensor ts = OnnxTensor.createTensor(env, FloatBuffer.wrap(scores.toFloats()), new long[] {2, 3, 4});
             OnnxTensor tm = OnnxTensor.createTensor(env, LongBuffer.wrap(MASK), new long[] {2, 4});
             OnnxTensor tk = OnnxTensor.createTensor(env, FloatBuffer.wrap(kv.toFloats()), new long[] {2, 1, 4});
             OrtSession.Result res = s.run(Map.of("scores", ts, "mask", tm, "kv", tk))) {
            for (String name : List.of("y", "z", "w")) {
                double[] h = got.get(name).toDoubles();
                FloatBuffer fb = ((OnnxTensor) res.get(name).orElseThrow()).getFloatBuffer();
                double[] ort = new double[fb.remaining()];
                for (int i = 0; i < ort.length; i++) {
                    ort[i] = fb.get(i);
                }
                double vs64 = Runs.relErr(h, want.get(name));
                double vsOrt = Runs.relErr(h, ort);
                assertTrue(vs64 <= 1e-5 && vsOrt <= 1e-5, name + ": float64 " + vs64 + ", ONNX Runtime " + vsOrt);
            }
        }
    }

    @Test
    void aMaskValueOtherThanMinusOneZeroOrOneIsATypedErrorAtRunTime() {
        Random r = new Random(15);
        long[] bad = MASK.clone();
        bad[5] = 2;
        Map<String, Tensor> in = Map.of("scores", floats(r, 2, 3, 4), "mask", longs(bad, 2, 4), "kv", floats(r, 2, 1, 4));
        IndexOutOfRangeException e = assertThrows(IndexOutOfRangeException.class, () -> run(in));
        assertTrue(e.getMessage().contains("id 2"), e.getMessage());
    }

    @Test
    void expandingARunTimeTensorAlongAHugeAxisIsRefusedBeforeAllocating() {
        GraphProto g = GraphProto.newBuilder().setName("huge")
                .addInput(floatValue("x", 1, 1))
                .addOutput(floatValue("y", 1, 1 << 30))
                .addInitializer(Onnx.int64s("target", 1, 1 << 30))
                .addNode(node("Tanh", "x", "t"))
                .addNode(node2("Expand", "t", "target", "y"))
                .build();
        long before = ((com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
        OnnxImportException e = assertThrows(OnnxImportException.class, () -> OnnxImporter.importModel(Onnx.model(17, g), Map.of()));
        long allocated = ((com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes() - before;
        assertTrue(e.getMessage().contains("Expand"), e.getMessage());
        assertTrue(allocated < 64 << 20, "allocated " + allocated + " bytes");
    }
}
