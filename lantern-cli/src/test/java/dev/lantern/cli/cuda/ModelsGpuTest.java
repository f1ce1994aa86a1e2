package dev.lantern.cli.cuda;

import dev.lantern.reference.Accuracy;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.Device;
import dev.lantern.Lantern;
import dev.lantern.Program;
import dev.lantern.RunMode;
import dev.lantern.Session;
import dev.lantern.Weights;
import dev.lantern.engine.CompileOptions;
import dev.lantern.frontend.hf.HfModel;
import dev.lantern.onnx.OnnxModel;
import dev.lantern.tensor.Npy;
import dev.lantern.tensor.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The GPT-2, LLaMA and BERT fixtures (lantern-onnx's test resources: transformers models with
 * random weights, PyTorch's outputs stored) on cuda:0, from the ONNX file and from the
 * save_pretrained folder, f32 and bf16 AMP, in every mode, against PyTorch's output.
 */
@Tag("gpu")
class ModelsGpuTest {
    static Path models() {
        Path p = Path.of("../lantern-onnx/src/test/resources/models");
        return Files.isDirectory(p) ? p : Path.of("lantern-onnx/src/test/resources/models");
    }


    @ParameterizedTest(name = "{0} {1} {2}")
    @CsvSource({"gpt2,onnx,NONE", "gpt2,onnx,BF16", "gpt2,folder,NONE", "gpt2,folder,BF16",
            "llama,onnx,NONE", "llama,onnx,BF16", "llama,folder,NONE", "llama,folder,BF16",
            "bert,onnx,NONE", "bert,onnx,BF16", "bert,folder,NONE", "bert,folder,BF16"})
    void theModelOnCudaMatchesPyTorch(String family, String route, CompileOptions.Amp amp) throws Exception {
        Path dir = models().resolve(family);
        Map<String, Tensor> inputs = new LinkedHashMap<>();
        for (String name : new String[] {"input_ids", "attention_mask", "token_type_ids"}) {
            Path f = dir.resolve("input_" + name + ".npy");
            if (Files.exists(f)) {
                inputs.put(name, Npy.read(f));
            }
        }
        String output = family.equals("bert") ? "last_hidden_state" : "logits";
        double[] want = Npy.read(dir.resolve("torch_" + output + ".npy")).toDoubles();
        CompileOptions options = CompileOptions.defaults().withTarget("cuda").withAmp(amp);
        Program program;
        Weights weights;
        if (route.equals("onnx")) {
            Map<String, long[]> shapes = new LinkedHashMap<>();
            inputs.forEach((k, v) -> shapes.put(k, Arrays.stream(v.shape().dims()).asLongStream().toArray()));
            OnnxModel.Compiled c = OnnxModel.open(dir.resolve("model.onnx"), options).compile(shapes);
            program = c.program();
            weights = c.weights();
        } else {
            HfModel m = HfModel.open(dir.resolve("hf"));
            Tensor ids = inputs.get("input_ids");
            program = Lantern.compile(m.graph(ids.shape().dim(0), ids.shape().dim(1)), options);
            weights = m.weights();
        }
        double tol = amp == CompileOptions.Amp.NONE ? 1e-4 : 3e-2;
        try (weights) {
            for (RunMode mode : RunMode.values()) {
                try (Session s = program.load(Device.cuda(0), weights, mode)) {
                    Map<String, Tensor> out = s.run(inputs);
                    Tensor y = out.containsKey(output) ? out.get(output) : out.values().iterator().next();
                    double e = Accuracy.relErr(y.toDoubles(), want);
                    System.out.printf("[gpu] model %s %s %s %s rel_err=%.2e vs PyTorch%n", family, route, amp, mode, e);
                    assertTrue(e < tol, family + " " + route + " " + amp + " " + mode + ": rel err " + e);
                }
            }
        }
    }
}
