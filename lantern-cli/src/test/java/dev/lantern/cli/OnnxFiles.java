package dev.lantern.cli;

import com.google.protobuf.ByteString;
import onnx.Onnx.GraphProto;
import onnx.Onnx.ModelProto;
import onnx.Onnx.NodeProto;
import onnx.Onnx.OperatorSetIdProto;
import onnx.Onnx.TensorProto;
import onnx.Onnx.TensorShapeProto;
import onnx.Onnx.TypeProto;
import onnx.Onnx.ValueInfoProto;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;

/**
 * Tiny ONNX models for the CLI's tests, built with the protobuf classes lantern-onnx compiles from
 * {@code onnx.proto}: a language model small enough to check by hand (token embedding, attention mask,
 * vocabulary head), with seeded random weights.
 */
final class OnnxFiles {
    static final int VOCAB = 29;
    static final int HIDDEN = 12;

    private OnnxFiles() {}

    /**
     * {@code logits[b,s,:] = (wte[input_ids[b,s]] · attention_mask[b,s]) · head}: input_ids and attention_mask
     * int64 {@code [batch, sequence]}, logits f32 {@code [batch, sequence, 29]}. Returns the model; {@link #wte}
     * and {@link #head} give its weights for a float64 reference.
     */
    static ModelProto languageModel(long seed) {
        GraphProto g = GraphProto.newBuilder().setName("tiny_lm")
                .addInput(value("input_ids", TensorProto.DataType.INT64_VALUE, "batch", "sequence"))
                .addInput(value("attention_mask", TensorProto.DataType.INT64_VALUE, "batch", "sequence"))
                .addOutput(value("logits", TensorProto.DataType.FLOAT_VALUE, "batch", "sequence", VOCAB))
                .addInitializer(floats("wte", new long[] {VOCAB, HIDDEN}, wte(seed)))
                .addInitializer(floats("head", new long[] {HIDDEN, VOCAB}, head(seed)))
                // the int64 mask selects a row of [[0], [1]]: a mask as exporters cast it, without a run-time
                // int-to-float Cast, which Lantern's kernels do not compute yet
                .addInitializer(floats("mask_rows", new long[] {2, 1}, new float[] {0f, 1f}))
                .addNode(node("Gather", "h", "wte", "input_ids"))
                .addNode(node("Gather", "m3", "mask_rows", "attention_mask"))
                .addNode(node("Mul", "hm", "h", "m3"))
                .addNode(node("MatMul", "logits", "hm", "head"))
                .build();
        return model(13, g);
    }

    /** y = Tanh(x) with x f32 {@code [batch, 8]}: no token ids. */
    static ModelProto floatModel() {
        return tanh("tanh", "batch", 8);
    }

    /** y = Tanh(x) with x f32 {@code [batch, sequence, hidden]}: a peer file with a transformer block's input, for timing paths. */
    static ModelProto blockShapedTanh() {
        return tanh("tanh_block", "batch", "sequence", "hidden");
    }

    /** y = Tanh(x), x and y f32 of {@code dims} (names are symbolic dims, integers fixed ones). */
    private static ModelProto tanh(String graphName, Object... dims) {
        return model(13, GraphProto.newBuilder().setName(graphName)
                .addInput(value("x", TensorProto.DataType.FLOAT_VALUE, dims))
                .addOutput(value("y", TensorProto.DataType.FLOAT_VALUE, dims))
                .addNode(node("Tanh", "y", "x")).build());
    }

    /** One node of an op Lantern does not know. */
    static ModelProto unknownOp() {
        return model(17, GraphProto.newBuilder().setName("frob")
                .addInput(value("x", TensorProto.DataType.FLOAT_VALUE, 2, 3))
                .addOutput(value("y", TensorProto.DataType.FLOAT_VALUE, 2, 3))
                .addNode(node("FrobnicateV2", "y", "x").toBuilder().setName("layer3/frob").build()).build());
    }

    /** The float model under opset 9, which Lantern does not import. */
    static ModelProto oldOpset() {
        return floatModel().toBuilder().setOpsetImport(0, OperatorSetIdProto.newBuilder().setDomain("").setVersion(9)).build();
    }

    static float[] wte(long seed) {
        return random(new Random(seed), VOCAB * HIDDEN, 1.0);
    }

    static float[] head(long seed) {
        Random r = new Random(seed);
        random(r, VOCAB * HIDDEN, 1.0); // the embedding's draws come first
        return random(r, HIDDEN * VOCAB, 0.5);
    }

    /** The float64 logits of {@link #languageModel} for {@code ids} and {@code mask}, both {@code [batch][seq]}. */
    static double[] reference(long seed, long[][] ids, long[][] mask) {
        float[] wte = wte(seed);
        float[] head = head(seed);
        int b = ids.length;
        int s = ids[0].length;
        double[] out = new double[b * s * VOCAB];
        for (int i = 0; i < b; i++) {
            for (int j = 0; j < s; j++) {
                for (int v = 0; v < VOCAB; v++) {
                    double acc = 0;
                    for (int h = 0; h < HIDDEN; h++) {
                        acc += (double) wte[(int) ids[i][j] * HIDDEN + h] * mask[i][j] * head[h * VOCAB + v];
                    }
                    out[(i * s + j) * VOCAB + v] = acc;
                }
            }
        }
        return out;
    }

    private static NodeProto node(String op, String output, String... inputs) {
        NodeProto.Builder b = NodeProto.newBuilder().setOpType(op).setName(op.toLowerCase() + "_" + output).addOutput(output);
        for (String i : inputs) {
            b.addInput(i);
        }
        return b.build();
    }

    private static TensorProto floats(String name, long[] dims, float[] v) {
        ByteBuffer b = ByteBuffer.allocate(4 * v.length).order(ByteOrder.LITTLE_ENDIAN);
        for (float x : v) {
            b.putFloat(x);
        }
        TensorProto.Builder t = TensorProto.newBuilder().setName(name).setDataType(TensorProto.DataType.FLOAT_VALUE)
                .setRawData(ByteString.copyFrom(b.array()));
        for (long d : dims) {
            t.addDims(d);
        }
        return t.build();
    }

    private static float[] random(Random r, int n, double scale) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (float) (r.nextGaussian() * scale);
        }
        return v;
    }

    /** A tensor value info; a String dim is symbolic, a Number fixed. */
    private static ValueInfoProto value(String name, int elemType, Object... dims) {
        TensorShapeProto.Builder s = TensorShapeProto.newBuilder();
        for (Object d : dims) {
            s.addDim(d instanceof String p ? TensorShapeProto.Dimension.newBuilder().setDimParam(p)
                    : TensorShapeProto.Dimension.newBuilder().setDimValue(((Number) d).longValue()));
        }
        return ValueInfoProto.newBuilder().setName(name)
                .setType(TypeProto.newBuilder().setTensorType(TypeProto.Tensor.newBuilder().setElemType(elemType).setShape(s))).build();
    }

    private static ModelProto model(int opset, GraphProto graph) {
        return ModelProto.newBuilder().setIrVersion(8).setProducerName("lantern-cli-test")
                .addOpsetImport(OperatorSetIdProto.newBuilder().setDomain("").setVersion(opset))
                .setGraph(graph).build();
    }
}
