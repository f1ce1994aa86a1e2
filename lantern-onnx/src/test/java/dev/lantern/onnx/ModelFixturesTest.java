package dev.lantern.onnx;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import dev.lantern.Device;
import dev.lantern.Lantern;
import dev.lantern.Program;
import dev.lantern.RunMode;
import dev.lantern.Session;
import dev.lantern.Weights;
import dev.lantern.engine.CompileOptions;
import dev.lantern.ir.DType;
import dev.lantern.tensor.Npy;
import dev.lantern.tensor.Tensor;
import onnx.Onnx.ModelProto;
import onnx.Onnx.ValueInfoProto;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.net.URISyntaxException;
import java.nio.FloatBuffer;
import java.nio.LongBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Whole transformers models (resources/models/&lt;family&gt;, made by scripts/fixtures/make_model_fixtures.py:
 * GPT-2, BERT, LLaMA with grouped-query attention; two layers, random weights, int64 token ids [2, 8]) imported
 * from their ONNX files with the shapes of the stored inputs, compiled with the public API and run on the CPU:
 * every output matches ONNX Runtime's stored outputs, ONNX Runtime's Java API run live on the same file, and
 * PyTorch's outputs, within 1e-5 relative.
 */
class ModelFixturesTest {
    private static final double TOLERANCE = 1e-5;

    static Path folder(String family) throws URISyntaxException {
        return Path.of(ModelFixturesTest.class.getResource("/models/" + family + "/model.onnx").toURI()).getParent();
    }

    /** The stored files {@code prefix<name>.npy} of a fixture, by name, in name order. */
    static Map<String, Tensor> npys(Path dir, String prefix) throws IOException {
        Map<String, Tensor> out = new TreeMap<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path p : files.toList()) {
                String f = p.getFileName().toString();
                if (f.startsWith(prefix) && f.endsWith(".npy")) {
                    out.put(f.substring(prefix.length(), f.length() - 4), Npy.read(p));
                }
            }
        }
        return out;
    }

    static long[] longs(Tensor t) {
        return java.util.Arrays.stream(t.shape().dims()).asLongStream().toArray();
    }

    /** The outputs of ONNX Runtime's Java API on {@code file}, by output name. */
    static Map<String, double[]> ortLive(Path file, Map<String, Tensor> inputs) throws OrtException {
        OrtEnvironment env = OrtEnvironment.getEnvironment();
        Map<String, OnnxTensor> feeds = new LinkedHashMap<>();
        Map<String, double[]> out = new HashMap<>();
        try (OrtSession s = env.createSession(file.toString(), new OrtSession.SessionOptions())) {
            for (var e : inputs.entrySet()) {
                Tensor t = e.getValue();
                long[] ids = t.segment().toArray(ValueLayout.JAVA_LONG);
                feeds.put(e.getKey(), OnnxTensor.createTensor(env, LongBuffer.wrap(ids), longs(t)));
            }
            try (OrtSession.Result r = s.run(feeds)) {
                for (var e : r) {
                    FloatBuffer b = ((OnnxTensor) e.getValue()).getFloatBuffer();
                    double[] d = new double[b.remaining()];
                    for (int i = 0; i < d.length; i++) {
                        d[i] = b.get(i);
                    }
                    out.put(e.getKey(), d);
                }
            }
        } finally {
            feeds.values().forEach(OnnxTensor::close);
        }
        return out;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"gpt2", "bert", "llama"})
    void matchesOnnxRuntimeAndPyTorch(String family) throws Exception {
        Path dir = folder(family);
        Map<String, Tensor> inputs = npys(dir, "input_");
        Map<String, long[]> shapes = new HashMap<>();
        for (var e : inputs.entrySet()) {
            // the token ids stay int64 from the .npy through to Lantern's gather
            assertEquals(DType.I64, e.getValue().dtype(), e.getKey());
            shapes.put(e.getKey(), longs(e.getValue()));
        }
        Map<String, Tensor> ortStored = npys(dir, "ort_");
        Map<String, Tensor> torch = npys(dir, "torch_");
        assertFalse(ortStored.isEmpty(), "fixture has ONNX Runtime outputs");
        assertEquals(ortStored.keySet(), torch.keySet());

        ImportedModel m = OnnxImporter.importFile(dir.resolve("model.onnx"), shapes);
        Program program = Lantern.compile(m.graph(), CompileOptions.defaults());
        // the graph's outputs carry the ONNX graph's output names, in its order
        List<String> onnxOutputs = ModelProto.parseFrom(Files.readAllBytes(dir.resolve("model.onnx"))).getGraph()
                .getOutputList().stream().map(ValueInfoProto::getName).toList();
        assertEquals(onnxOutputs, program.outputNames());
        assertEquals(ortStored.keySet(), Set.copyOf(onnxOutputs));
        Map<String, Tensor> got;
        try (Session session = program.load(Device.cpu(), Weights.of(m.params()), RunMode.COMPILED)) {
            got = session.run(inputs);
        }
        Map<String, double[]> live = ortLive(dir.resolve("model.onnx"), inputs);
        StringBuilder report = new StringBuilder(family);
        for (String name : ortStored.keySet()) {
            Tensor want = ortStored.get(name);
            Tensor have = got.get(name);
            assertEquals(want.shape(), have.shape(), family + " " + name);
            double[] h = have.toDoubles();
            double vsStored = Runs.relErr(h, want.toDoubles());
            double vsLive = Runs.relErr(h, live.get(name));
            double vsTorch = Runs.relErr(h, torch.get(name).toDoubles());
            report.append(String.format(" %s: ort %.2e, ort-live %.2e, torch %.2e;", name, vsStored, vsLive, vsTorch));
            assertTrue(vsStored <= TOLERANCE && vsLive <= TOLERANCE && vsTorch <= TOLERANCE, report.toString());
        }
        System.out.println(report);
    }

    /**
     * Another binding of the symbolic batch and sequence: the second row's first 7 tokens (its padding
     * included, for BERT), imported for shape [1, 7] and checked against ONNX Runtime run live.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"gpt2", "bert", "llama"})
    void anotherShapeMatchesOnnxRuntime(String family) throws Exception {
        Path dir = folder(family);
        Map<String, Tensor> inputs = new HashMap<>();
        Map<String, long[]> shapes = new HashMap<>();
        for (var e : npys(dir, "input_").entrySet()) {
            Tensor full = e.getValue();
            int seq = full.shape().dim(1);
            Tensor part = Tensor.allocate(DType.I64, dev.lantern.ir.Shape.of(1, 7));
            for (int j = 0; j < 7; j++) {
                part.segment().setAtIndex(ValueLayout.JAVA_LONG, j, full.segment().getAtIndex(ValueLayout.JAVA_LONG, seq + j));
            }
            inputs.put(e.getKey(), part);
            shapes.put(e.getKey(), new long[] {1, 7});
        }
        ImportedModel m = OnnxImporter.importFile(dir.resolve("model.onnx"), shapes);
        Program program = Lantern.compile(m.graph(), CompileOptions.defaults());
        Map<String, Tensor> got;
        try (Session session = program.load(Device.cpu(), Weights.of(m.params()), RunMode.COMPILED)) {
            got = session.run(inputs);
        }
        Map<String, double[]> live = ortLive(dir.resolve("model.onnx"), inputs);
        assertEquals(live.keySet(), got.keySet());
        for (String name : live.keySet()) {
            double rel = Runs.relErr(got.get(name).toDoubles(), live.get(name));
            assertTrue(rel <= TOLERANCE, family + " [1, 7] " + name + ": Lantern vs ONNX Runtime " + rel);
        }
    }
}
