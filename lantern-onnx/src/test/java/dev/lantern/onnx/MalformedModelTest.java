package dev.lantern.onnx;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import dev.lantern.ir.LanternException;
import onnx.Onnx.AttributeProto;
import onnx.Onnx.GraphProto;
import onnx.Onnx.ModelProto;
import onnx.Onnx.NodeProto;
import onnx.Onnx.StringStringEntryProto;
import onnx.Onnx.TensorProto;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static dev.lantern.onnx.Onnx.attr;
import static dev.lantern.onnx.Onnx.floatValue;
import static dev.lantern.onnx.Onnx.floats;
import static dev.lantern.onnx.Onnx.int64s;
import static dev.lantern.onnx.Onnx.node;
import static dev.lantern.onnx.Onnx.node2;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Malformed and hostile models: each is a typed {@link OnnxImportException} (no other exception, no hang, no
 * allocation near the size a model claims, no file opened outside the model's folder).
 */
@Timeout(30)
class MalformedModelTest {
    private static final Map<String, long[]> X = Map.of("x", new long[] {2, 4});

    /** A model that is fine but for {@code nodes}/{@code inits}: x (batch, 4) in, y out. */
    private static ModelProto model(int opset, GraphProto.Builder g) {
        return Onnx.model(opset, g.setName("bad").addInput(floatValue("x", "batch", 4)).addOutput(floatValue("y")).build());
    }

    private static OnnxImportException refused(ModelProto m, Map<String, long[]> shapes) {
        return assertThrows(OnnxImportException.class, () -> OnnxImporter.importModel(m, shapes));
    }

    private static OnnxImportException refusedBytes(byte[] bytes) {
        return assertThrows(OnnxImportException.class, () -> OnnxImporter.importModel(ModelLoader.parse(bytes), X));
    }

    @Test
    void everyTruncationIsTypedAndMostAreRefused() {
        byte[] full = TestModels.mlp(1).toByteArray();
        int refused = 0;
        for (int len = 0; len < full.length; len += 3) {
            byte[] cut = java.util.Arrays.copyOf(full, len);
            try {
                OnnxImporter.importModel(ModelLoader.parse(cut), Map.of("x", new long[] {2, TestModels.MLP_IN}));
            } catch (OnnxImportException e) {
                refused++;
            }
        }
        // a cut at a field boundary can leave a smaller valid model; a cut inside a field never parses
        assertTrue(refused >= full.length / 3 * 9 / 10, refused + " of " + (full.length / 3 + 1) + " truncations refused");
        OnnxImportException e = refusedBytes(java.util.Arrays.copyOf(full, full.length / 2));
        assertTrue(e.getMessage().startsWith("malformed ONNX model"), e.getMessage());
    }

    @Test
    void wrongWireTypesAreTyped() throws IOException {
        // field 7 (graph) written as a varint: protobuf keeps it as an unknown field, so there is no graph
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        CodedOutputStream o = CodedOutputStream.newInstance(b);
        o.writeMessage(8, onnx.Onnx.OperatorSetIdProto.newBuilder().setVersion(13).build());
        o.writeUInt64(7, 12345);
        o.flush();
        assertTrue(refusedBytes(b.toByteArray()).getMessage().contains("no graph"));
        // a length-delimited field whose length runs past the end
        byte[] bad = {0x3a, (byte) 0xff, (byte) 0xff, 0x03, 0x01};
        assertTrue(refusedBytes(bad).getMessage().startsWith("malformed ONNX model"));
        // an attribute of the wrong type: Softmax's axis as a float
        ModelProto m = model(13, GraphProto.newBuilder().addNode(node("Softmax", "x", "y", attr("axis", 1.5f))));
        assertTrue(refused(m, X).getMessage().contains("attribute 'axis' should be INT"), refused(m, X).getMessage());
    }

    @Test
    void unknownOpNamesOpNodeAndOpset() {
        ModelProto m = model(17, GraphProto.newBuilder().addNode(NodeProto.newBuilder().setOpType("FrobnicateV2").setName("layer3/frob")
                .addInput("x").addOutput("y")));
        String msg = refused(m, X).getMessage();
        assertTrue(msg.contains("FrobnicateV2") && msg.contains("layer3/frob") && msg.contains("opset 17"), msg);
        ModelProto ms = model(17, GraphProto.newBuilder().addNode(NodeProto.newBuilder().setOpType("Gelu").setDomain("org.example")
                .setName("g").addInput("x").addOutput("y")));
        assertTrue(refused(ms, X).getMessage().contains("org.example"));
    }

    @ParameterizedTest
    @ValueSource(ints = {12, 22, 0})
    void opsetsOutsideTheRangeAreRefused(int opset) {
        ModelProto m = model(opset, GraphProto.newBuilder().addNode(node("Relu", "x", "y")));
        assertTrue(refused(m, X).getMessage().contains("opset " + opset), refused(m, X).getMessage());
    }

    @Test
    void cyclesAndUnsortedNodesAreRefused() {
        ModelProto cycle = model(13, GraphProto.newBuilder()
                .addNode(node2("Add", "x", "b", "a"))
                .addNode(node2("Add", "a", "x", "b"))
                .addNode(node("Relu", "b", "y")));
        assertTrue(refused(cycle, X).getMessage().contains("reads 'b'"), refused(cycle, X).getMessage());
        ModelProto unsorted = model(13, GraphProto.newBuilder()
                .addNode(node("Relu", "h", "y"))
                .addNode(node("Neg", "x", "h")));
        assertTrue(refused(unsorted, X).getMessage().contains("reads 'h'"));
        ModelProto twice = model(13, GraphProto.newBuilder()
                .addNode(node("Relu", "x", "y"))
                .addNode(node("Neg", "x", "y")));
        assertTrue(refused(twice, X).getMessage().contains("already defined"));
    }

    @Test
    void absurdAndNegativeDimsAreRefused() {
        GraphProto.Builder neg = GraphProto.newBuilder()
                .addInitializer(TensorProto.newBuilder().setName("w").setDataType(1).addDims(-3).addDims(4).build())
                .addNode(node2("Add", "x", "w", "y"));
        assertTrue(refused(model(13, neg), X).getMessage().contains("negative"));
        // input shapes: negative, zero, absurd, and a rank that does not match
        ModelProto ok = model(13, GraphProto.newBuilder().addNode(node("Relu", "x", "y")));
        refused(ok, Map.of("x", new long[] {-2, 4}));
        refused(ok, Map.of("x", new long[] {0, 4}));
        refused(ok, Map.of("x", new long[] {1L << 40, 4}));
        refused(ok, Map.of("x", new long[] {2, 4, 1}));
        refused(ok, Map.of("x", new long[] {2, 5}));
        refused(ok, Map.of());
        // a Reshape to a negative dim, and to a huge one
        for (long[] target : new long[][] {{-4, -2}, {1L << 62, 4}, {4, 0, -1}}) {
            ModelProto r = model(13, GraphProto.newBuilder().addInitializer(int64s("s", target)).addNode(node2("Reshape", "x", "s", "y")));
            refused(r, X);
        }
    }

    /** A 10^12-element initializer in a few bytes, and folds that would make one: refused before allocation. */
    @Test
    void aTrillionElementTensorAllocatesNothing() {
        ModelProto raw = model(13, GraphProto.newBuilder()
                .addInitializer(TensorProto.newBuilder().setName("w").setDataType(1).addDims(1_000_000).addDims(1_000_000)
                        .setRawData(ByteString.copyFrom(new byte[16])).build())
                .addNode(node2("Add", "x", "w", "y")));
        ModelProto typed = model(13, GraphProto.newBuilder()
                .addInitializer(TensorProto.newBuilder().setName("w").setDataType(1).addDims(1000).addDims(1000).addDims(1000).addDims(1000)
                        .addFloatData(1f).build())
                .addNode(node2("Add", "x", "w", "y")));
        ModelProto fits = model(13, GraphProto.newBuilder()  // 10^9 elements: within int range, so only the size check stops it
                .addInitializer(TensorProto.newBuilder().setName("w").setDataType(1).addDims(1000).addDims(1_000_000)
                        .setRawData(ByteString.copyFrom(new byte[64])).build())
                .addNode(node2("Add", "x", "w", "y")));
        ModelProto fold = model(13, GraphProto.newBuilder()
                .addInitializer(int64s("shape", 1_000_000, 1_000_000))
                .addNode(node("ConstantOfShape", "shape", "big"))
                .addNode(node2("Add", "x", "big", "y")));
        ModelProto range = model(13, GraphProto.newBuilder()
                .addInitializer(int64s("a", 0).toBuilder().clearDims().build())
                .addInitializer(int64s("b", 1_000_000_000_000L).toBuilder().clearDims().build())
                .addInitializer(int64s("c", 1).toBuilder().clearDims().build())
                .addNode(Onnx.node("Range", new String[] {"a", "b", "c"}, new String[] {"y"})));
        ModelProto expand = model(13, GraphProto.newBuilder()
                .addInitializer(floats("one", new long[] {1}, new float[] {1f}))
                .addInitializer(int64s("shape", 100_000, 100_000))
                .addNode(node2("Expand", "one", "shape", "big"))
                .addNode(node2("Add", "x", "big", "y")));
        for (ModelProto m : new ModelProto[] {raw, typed, fits, fold, range, expand}) {
            byte[] bytes = m.toByteArray();
            long before = allocated();
            OnnxImportException e = assertThrows(OnnxImportException.class, () -> OnnxImporter.importModel(ModelLoader.parse(bytes), X));
            long used = allocated() - before;
            assertTrue(used < 64L << 20, "allocated " + used + " bytes refusing a " + bytes.length + "-byte model: " + e.getMessage());
        }
    }

    private static long allocated() {
        var bean = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        return bean.getThreadAllocatedBytes(Thread.currentThread().threadId());
    }

    private static ModelProto externalModel(String location, long offset, long length) {
        TensorProto.Builder w = TensorProto.newBuilder().setName("w").setDataType(1).addDims(4)
                .setDataLocation(TensorProto.DataLocation.EXTERNAL)
                .addExternalData(StringStringEntryProto.newBuilder().setKey("location").setValue(location))
                .addExternalData(StringStringEntryProto.newBuilder().setKey("offset").setValue(Long.toString(offset)));
        if (length >= 0) {
            w.addExternalData(StringStringEntryProto.newBuilder().setKey("length").setValue(Long.toString(length)));
        }
        return model(13, GraphProto.newBuilder().addInitializer(w).addNode(node2("Add", "x", "w", "y")));
    }

    private static byte[] floatsLe(float... v) {
        ByteBuffer b = ByteBuffer.allocate(4 * v.length).order(ByteOrder.LITTLE_ENDIAN);
        for (float f : v) {
            b.putFloat(f);
        }
        return b.array();
    }

    @Test
    void externalDataInsideTheFolderLoads(@TempDir Path dir) throws IOException {
        Files.write(dir.resolve("weights.bin"), concat(new byte[8], floatsLe(1f, 2f, 3f, 4f)));
        Files.write(dir.resolve("m.onnx"), externalModel("weights.bin", 8, 16).toByteArray());
        ImportedModel m = OnnxImporter.importFile(dir.resolve("m.onnx"), X);
        assertEquals(3f, m.params().get("w").get(2));
    }

    @Test
    void externalDataLeavingTheFolderIsRefused(@TempDir Path root) throws IOException {
        Path dir = Files.createDirectory(root.resolve("model"));
        Path outside = root.resolve("secret.bin");
        Files.write(outside, floatsLe(1f, 2f, 3f, 4f));
        Files.createSymbolicLink(dir.resolve("link.bin"), outside);
        Files.createDirectory(dir.resolve("sub"));
        Files.createSymbolicLink(dir.resolve("sub/up"), root);
        Files.write(dir.resolve("short.bin"), floatsLe(1f));
        String[][] cases = {
            {"../secret.bin", "leads out"},
            {"sub/../../secret.bin", "leads out"},
            {outside.toString(), "absolute"},
            {"link.bin", "link leading out"},
            {"sub/up/secret.bin", "link leading out"},
            {"missing.bin", "not found"},
            {"sub", "not a regular file"},
            {"short.bin", "reads bytes"},
        };
        for (String[] c : cases) {
            Path file = dir.resolve("m.onnx");
            Files.write(file, externalModel(c[0], 0, -1).toByteArray());
            OnnxImportException e = assertThrows(OnnxImportException.class, () -> OnnxImporter.importFile(file, X), c[0]);
            assertTrue(e.getMessage().contains(c[1]), c[0] + ": " + e.getMessage());
        }
        Files.write(dir.resolve("ok.bin"), floatsLe(1f, 2f, 3f, 4f));
        Path file = dir.resolve("m.onnx");
        Files.write(file, externalModel("ok.bin", 0, 12).toByteArray());
        assertTrue(assertThrows(OnnxImportException.class, () -> OnnxImporter.importFile(file, X)).getMessage().contains("length"));
        Files.write(file, externalModel("ok.bin", 1L << 40, -1).toByteArray());
        assertThrows(OnnxImportException.class, () -> OnnxImporter.importFile(file, X));
        // from bytes there is no folder: external data is refused outright
        assertTrue(refused(externalModel("ok.bin", 0, -1), X).getMessage().contains("model's folder"));
    }

    @Test
    void deeplyNestedSubgraphsAreRefusedByTheParser() {
        GraphProto g = GraphProto.newBuilder().setName("leaf").build();
        for (int i = 0; i < 200; i++) {
            NodeProto n = NodeProto.newBuilder().setOpType("If").addAttribute(AttributeProto.newBuilder().setName("then_branch")
                    .setType(AttributeProto.AttributeType.GRAPH).setG(g)).build();
            g = GraphProto.newBuilder().setName("g" + i).addNode(n).build();
        }
        byte[] bytes = Onnx.model(13, g).toByteArray();
        assertTrue(refusedBytes(bytes).getMessage().startsWith("malformed ONNX model"));
    }

    @Test
    void onlyTypedErrorsFromRandomMutations() {
        byte[] seed = TestModels.shapeArithmetic(3).toByteArray();
        java.util.Random r = new java.util.Random(42);
        for (int k = 0; k < 300; k++) {
            byte[] b = seed.clone();
            for (int j = 0; j < 1 + r.nextInt(4); j++) {
                b[r.nextInt(b.length)] = (byte) r.nextInt(256);
            }
            try {
                OnnxImporter.importModel(ModelLoader.parse(b), Map.of("x", new long[] {2, 5, TestModels.WIDTH}));
            } catch (LanternException expected) {
                // a typed refusal
            } catch (RuntimeException e) {
                fail("mutation " + k + " escaped as " + e, e);
            }
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] r = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }
}
