package dev.lantern.onnx;

import dev.lantern.reference.Accuracy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.Device;
import dev.lantern.Lantern;
import dev.lantern.Program;
import dev.lantern.RunMode;
import dev.lantern.Session;
import dev.lantern.Weights;
import dev.lantern.frontend.hf.HfModel;
import dev.lantern.ir.Graph;
import dev.lantern.tensor.Npy;
import dev.lantern.tensor.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The {@code save_pretrained} folders of the ONNX fixtures (made by scripts/fixtures/make_model_fixtures.py,
 * independently of lantern-core's own HF fixtures) built by Lantern's config.json builders
 * ({@link HfModel}) and run through the public API on the CPU, against PyTorch's stored outputs:
 * the same models through both routes, ONNX and model folder.
 */
class HfFolderFixturesTest {
    static final Path MODELS = Path.of("src/test/resources/models");

    @ParameterizedTest
    @ValueSource(strings = {"gpt2", "llama", "bert"})
    void theModelFolderMatchesPyTorch(String family) throws Exception {
        Path dir = MODELS.resolve(family);
        HfModel model = HfModel.open(dir.resolve("hf"));
        Map<String, Tensor> inputs = new LinkedHashMap<>();
        for (String name : new String[] {"input_ids", "attention_mask", "token_type_ids"}) {
            Path f = dir.resolve("input_" + name + ".npy");
            if (Files.exists(f)) {
                inputs.put(name, Npy.read(f));
            }
        }
        Tensor ids = inputs.get("input_ids");
        Graph g = model.graph(ids.shape().dim(0), ids.shape().dim(1));
        Program p = Lantern.compile(g);
        String output = family.equals("bert") ? "last_hidden_state" : "logits";
        double[] want = Npy.read(dir.resolve("torch_" + output + ".npy")).toDoubles();
        try (Weights w = model.weights(); Session s = p.load(Device.cpu(), w, RunMode.COMPILED)) {
            double[] got = s.run(inputs).values().iterator().next().toDoubles();
            assertEquals(want.length, got.length);
            double e = Accuracy.relErr(got, want);
            assertTrue(e < 1e-5, family + ": rel err " + e);
        }
    }
}
