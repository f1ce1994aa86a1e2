package dev.lantern.onnx;

import onnx.Onnx.GraphProto;
import onnx.Onnx.ModelProto;
import onnx.Onnx.StringStringEntryProto;
import onnx.Onnx.TensorProto;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Writes the importer fuzz test's regression seeds: the test models, and hostile variants of them. Run from the
 * module folder with the test classpath: {@code java -cp ... dev.lantern.onnx.FuzzSeeds src/test/resources/...}.
 * Each seed is model bytes plus one trailing byte that the fuzz target reads as the symbolic dims' value.
 */
final class FuzzSeeds {
    private FuzzSeeds() {}

    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args[0]);
        Files.createDirectories(dir);
        Map<String, byte[]> seeds = new LinkedHashMap<>();
        seeds.put("seed-mlp", TestModels.mlp(1).toByteArray());
        seeds.put("seed-layer-norm", TestModels.layerNorm(1, false).toByteArray());
        seeds.put("seed-layer-norm-decomposed", TestModels.layerNorm(1, true).toByteArray());
        seeds.put("seed-gelu-decomposed", TestModels.decomposedGelu(1).toByteArray());
        seeds.put("seed-rms-silu", TestModels.rmsNormSilu(1).toByteArray());
        seeds.put("seed-attention-shapes", TestModels.shapeArithmetic(1).toByteArray());
        byte[] mlp = seeds.get("seed-mlp");
        seeds.put("seed-truncated", Arrays.copyOf(mlp, mlp.length / 2));
        ModelProto big = TestModels.mlp(1).toBuilder().setGraph(TestModels.mlp(1).getGraph().toBuilder()
                .setInitializer(0, TensorProto.newBuilder().setName("W1").setDataType(1).addDims(1_000_000).addDims(1_000_000)
                        .setRawData(com.google.protobuf.ByteString.copyFrom(new byte[16])))).build();
        seeds.put("seed-trillion-elements", big.toByteArray());
        ModelProto external = TestModels.mlp(1).toBuilder().setGraph(TestModels.mlp(1).getGraph().toBuilder()
                .setInitializer(1, TestModels.mlp(1).getGraph().getInitializer(1).toBuilder().clearRawData()
                        .setDataLocation(TensorProto.DataLocation.EXTERNAL)
                        .addExternalData(StringStringEntryProto.newBuilder().setKey("location").setValue("../../etc/passwd")))).build();
        seeds.put("seed-external-escape", external.toByteArray());
        GraphProto cyc = TestModels.mlp(1).getGraph().toBuilder()
                .setNode(0, Onnx.node2("MatMul", "x", "y", "h0")).build();
        seeds.put("seed-cycle", TestModels.mlp(1).toBuilder().setGraph(cyc).build().toByteArray());
        for (Map.Entry<String, byte[]> e : seeds.entrySet()) {
            byte[] b = Arrays.copyOf(e.getValue(), e.getValue().length + 1);
            b[b.length - 1] = 2; // symbolic dims bound to 1 + (2 mod 4)
            Files.write(dir.resolve(e.getKey()), b);
        }
    }
}
