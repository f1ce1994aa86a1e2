package dev.lantern.onnx;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import dev.lantern.tensor.Tensor;
import onnx.Onnx.ModelProto;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.FloatBuffer;
import java.util.Arrays;
import java.util.Map;
import java.util.function.LongFunction;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The same model bytes through ONNX Runtime (Java API, CPU) and through Lantern's importer and CPU backend,
 * on the same seeded random inputs: within 1e-5 relative (‖Lantern − ORT‖ / ‖ORT‖), for two input shapes each.
 */
class OnnxRuntimeDifferentialTest {
    private static OrtEnvironment env;

    @BeforeAll
    static void start() {
        env = OrtEnvironment.getEnvironment();
    }

    static Stream<Arguments> models() {
        return Stream.of(
                Arguments.of("mlp", (LongFunction<ModelProto>) TestModels::mlp, new int[] {3, TestModels.MLP_IN}),
                Arguments.of("mlp", (LongFunction<ModelProto>) TestModels::mlp, new int[] {17, TestModels.MLP_IN}),
                Arguments.of("layer_norm", (LongFunction<ModelProto>) s -> TestModels.layerNorm(s, false), new int[] {2, 5, TestModels.WIDTH}),
                Arguments.of("layer_norm_decomposed", (LongFunction<ModelProto>) s -> TestModels.layerNorm(s, true), new int[] {3, 4, TestModels.WIDTH}),
                Arguments.of("gelu_decomposed", (LongFunction<ModelProto>) TestModels::decomposedGelu, new int[] {7, TestModels.WIDTH}),
                Arguments.of("rms_norm_silu", (LongFunction<ModelProto>) TestModels::rmsNormSilu, new int[] {2, 6, TestModels.WIDTH}),
                Arguments.of("attention_shape_arithmetic", (LongFunction<ModelProto>) TestModels::shapeArithmetic, new int[] {2, 7, TestModels.WIDTH}),
                Arguments.of("attention_shape_arithmetic", (LongFunction<ModelProto>) TestModels::shapeArithmetic, new int[] {1, 16, TestModels.WIDTH}),
                Arguments.of("where_causal_mask", (LongFunction<ModelProto>) TestModels::whereMask, new int[] {2, 6, 6}),
                Arguments.of("movement", (LongFunction<ModelProto>) TestModels::movement, new int[] {3, 6, 8}));
    }

    @ParameterizedTest(name = "{0} {2}")
    @MethodSource("models")
    void matchesOnnxRuntime(String name, LongFunction<ModelProto> make, int[] shape) throws OrtException {
        long seed = 7_000L + name.hashCode() + Arrays.hashCode(shape);
        ModelProto model = make.apply(seed);
        Tensor x = Runs.input(seed + 1, shape);
        long[] dims = Arrays.stream(shape).asLongStream().toArray();

        float[] ort;
        try (OrtSession s = env.createSession(model.toByteArray(), new OrtSession.SessionOptions());
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
        ImportedModel m = OnnxImporter.importModel(model, Map.of("x", dims));
        double[] got = Runs.cpu(m, Map.of("x", x));
        double rel = Runs.relErr(got, want);
        assertTrue(rel <= 1e-5, name + " " + Arrays.toString(shape) + ": Lantern vs ONNX Runtime " + rel);
    }
}
