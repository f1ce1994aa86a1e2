package dev.lantern.onnx;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import dev.lantern.ir.Op;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.URISyntaxException;
import java.nio.FloatBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Models written by torch.onnx.export (both exporters; resources/dev/lantern/onnx/torch/export.py made them):
 * the importer recognises the decomposed LayerNorm, GELU, RMSNorm and SiLU they contain, reads the dynamo
 * exporter's external data from the model's folder, and matches ONNX Runtime within 1e-5 relative.
 */
class TorchExportTest {
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource(delimiter = ';', value = {
        "mlp-legacy-op14.onnx; 3,16; layer_norm gelu softmax",
        "mlp-dynamo-op18.onnx; 6,16; layer_norm gelu softmax",
        "block-legacy-op17.onnx; 2,8,32; rms_norm silu softmax",
        "block-legacy-op17.onnx; 1,13,32; rms_norm silu softmax",
        "block-dynamo-op18.onnx; 3,5,32; rms_norm silu softmax",
    })
    void matchesOnnxRuntime(String file, String shape, String ops) throws OrtException, URISyntaxException {
        Path model = Path.of(TorchExportTest.class.getResource("torch/" + file).toURI());
        long[] dims = Arrays.stream(shape.split(",")).mapToLong(Long::parseLong).toArray();
        ImportedModel m = OnnxImporter.importFile(model, Map.of("x", dims));
        Set<String> have = m.graph().nodes().stream().map(n -> n.op().text()).collect(Collectors.toSet());
        for (String op : ops.split(" ")) {
            assertTrue(have.contains(op), file + " imports with a " + op + " op: " + have);
        }
        assertTrue(!have.contains(Op.ELEMENTWISE_FUSED.text()), "the importer emits primitive ops");

        Tensor x = Runs.input(file.hashCode() + dims.length, Arrays.stream(dims).mapToInt(d -> (int) d).toArray());
        double[] got = Runs.cpu(m, Map.of("x", x));
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        float[] ort;
        try (OrtSession s = env.createSession(model.toString(), new OrtSession.SessionOptions());
             OnnxTensor in = OnnxTensor.createTensor(env, FloatBuffer.wrap(x.toFloats()), dims);
             OrtSession.Result r = s.run(Map.of("x", in))) {
            FloatBuffer b = ((OnnxTensor) r.get(0)).getFloatBuffer();
            ort = new float[b.remaining()];
            b.get(ort);
        }
        double[] want = new double[ort.length];
        for (int i = 0; i < ort.length; i++) {
            want[i] = ort[i];
        }
        double rel = Runs.relErr(got, want);
        assertTrue(rel <= 1e-5, file + " " + shape + ": Lantern vs ONNX Runtime " + rel);
    }
}
