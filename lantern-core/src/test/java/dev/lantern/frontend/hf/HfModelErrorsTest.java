package dev.lantern.frontend.hf;

import dev.lantern.Device;
import dev.lantern.Lantern;
import dev.lantern.Program;
import dev.lantern.Session;
import dev.lantern.Weights;
import dev.lantern.WeightsException;
import dev.lantern.engine.CompileOptions;
import dev.lantern.tensor.Npy;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Model folders Lantern cannot build: each a typed error naming the config field or tensor at fault. */
class HfModelErrorsTest {
    @TempDir
    Path tmp;
    private int copies;

    /** The fixture folder of {@code family} copied, with {@code from} replaced by {@code to} in its config.json. */
    Path edited(String family, String from, String to) throws IOException {
        Path src = HfModelTest.HF.resolve(family);
        Path dst = tmp.resolve(family + "-" + copies++);
        Files.createDirectories(dst);
        for (String f : new String[] {"config.json", "model.safetensors"}) {
            Files.copy(src.resolve(f), dst.resolve(f));
        }
        String config = Files.readString(dst.resolve("config.json"));
        assertTrue(config.contains(from), from);
        Files.writeString(dst.resolve("config.json"), config.replace(from, to));
        return dst;
    }

    HfModelException refused(Path folder, String subject) {
        HfModelException e = assertThrows(HfModelException.class, () -> HfModel.open(folder).graph(2, 8));
        assertEquals(subject, e.subject(), e.getMessage());
        assertTrue(e.getMessage().contains(subject), e.getMessage());
        return e;
    }

    @Test
    void unknownModelType() throws IOException {
        HfModelException e = refused(edited("gpt2", "\"model_type\": \"gpt2\"", "\"model_type\": \"t5\""), "model_type");
        assertTrue(e.getMessage().contains("\"t5\""), e.getMessage());
    }

    @Test
    void missingModelType() throws IOException {
        refused(edited("bert", "\"model_type\": \"bert\",", ""), "model_type");
    }

    @Test
    void missingField() throws IOException {
        HfModelException e = refused(edited("llama", "\"intermediate_size\": 128,", ""), "intermediate_size");
        assertTrue(e.getMessage().contains("missing field 'intermediate_size'"), e.getMessage());
    }

    @Test
    void fieldOfTheWrongKind() throws IOException {
        HfModelException e = refused(edited("gpt2", "\"n_embd\": 64", "\"n_embd\": 64.5"), "n_embd");
        assertTrue(e.getMessage().contains("64.5"), e.getMessage());
        refused(edited("gpt2", "\"n_head\": 4", "\"n_head\": \"4\""), "n_head");
        refused(edited("gpt2", "\"n_head\": 4", "\"n_head\": 0"), "n_head");
    }

    @Test
    void unsupportedValues() throws IOException {
        refused(edited("llama", "\"hidden_act\": \"silu\"", "\"hidden_act\": \"relu\""), "hidden_act");
        refused(edited("llama", "\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3"), "num_key_value_heads");
        refused(edited("llama", "\"rope_type\": \"default\"", "\"rope_type\": \"yarn\""), "rope_parameters");
        refused(edited("gpt2", "\"activation_function\": \"gelu_new\"", "\"activation_function\": \"swish\""), "activation_function");
        refused(edited("bert", "\"model_type\": \"bert\"",
                "\"model_type\": \"bert\", \"position_embedding_type\": \"relative_key\""),
                "position_embedding_type");
    }

    @Test
    void configNotJson() throws IOException {
        refused(edited("gpt2", "\"n_layer\": 2,", "\"n_layer\": 2,,"), "config.json");
        Path empty = Files.createDirectories(tmp.resolve("empty"));
        refused(empty, "config.json");
    }

    @Test
    void tensorAbsentFromTheSafetensors() throws IOException {
        // a third layer the checkpoint does not have: its first tensor is named
        HfModelException e = refused(edited("gpt2", "\"n_layer\": 2", "\"n_layer\": 3"), "transformer.h.2.ln_1.weight");
        assertTrue(e.getMessage().contains("no tensor 'transformer.h.2.ln_1.weight'"), e.getMessage());
        refused(edited("llama", "\"attention_bias\": false", "\"attention_bias\": true"),
                "model.layers.0.self_attn.q_proj.bias");
    }

    @Test
    void seqPastThePositions() throws IOException {
        HfModel m = HfModel.open(HfModelTest.HF.resolve("gpt2"));
        HfModelException e = assertThrows(HfModelException.class, () -> m.graph(1, 65));
        assertEquals("n_positions", e.subject());
        m.graph(1, 64); // the longest the model has positions for
    }

    @Test
    void tensorOfAnotherShapeIsAWeightsErrorAtLoad() throws IOException {
        // n_inner 96 against the checkpoint's 128: the graph builds, the binding names the tensor and both shapes
        HfModel m = HfModel.open(edited("gpt2", "\"n_inner\": 128", "\"n_inner\": 96"));
        Program p = Lantern.compile(m.graph(2, 8), CompileOptions.defaults());
        try (Weights w = m.weights()) {
            WeightsException e = assertThrows(WeightsException.class, () -> p.load(Device.cpu(), w).close());
            assertTrue(e.getMessage().contains("transformer.h.0.mlp.c_fc"), e.getMessage());
        }
    }

    @Test
    void paddingMaskMatters() throws IOException {
        // the fixture's second sequence is padded after position 5: attending to the pads changes its output
        Path folder = HfModelTest.HF.resolve("bert");
        HfModel m = HfModel.open(folder);
        Tensor mask = Npy.read(folder.resolve("attention_mask.npy"));
        Tensor ones = Tensor.allocate(mask.type());
        for (int i = 0; i < ones.numel(); i++) {
            ones.set(i, 1);
        }
        Program p = Lantern.compile(m.graph(2, 8), CompileOptions.defaults());
        Tensor expected = Npy.read(folder.resolve("expected.npy"));
        try (Weights w = m.weights(); Session s = p.load(Device.cpu(), w)) {
            Tensor got = s.run(Map.of("input_ids", Npy.read(folder.resolve("input_ids.npy")), "attention_mask", ones,
                    "token_type_ids", Npy.read(folder.resolve("token_type_ids.npy")))).values().iterator().next();
            double err = HfModelTest.maxRelErr(expected.toDoubles(), got.toDoubles());
            assertTrue(err > 1e-3, "unmasked pads changed the output by only " + err);
        }
    }
}
