package dev.lantern.frontend.hf;

import dev.lantern.Weights;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.weights.SafetensorsModel;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * A Hugging Face model folder ({@code config.json} + {@code model.safetensors}, or shards and
 * their index) of the GPT-2, LLaMA or BERT family, built as a Lantern graph from the config with
 * Lantern's own ops. Every parameter is named as the checkpoint's tensor, so {@link #weights()}
 * ({@code Weights.safetensors(folder)}) binds the file as it is:
 *
 * <pre>{@code
 * HfModel m = HfModel.open(folder);
 * Program p = Lantern.compile(m.graph(1, 128), CompileOptions.defaults());
 * try (Weights w = m.weights(); Session s = p.load(Device.cpu(), w)) {
 *     Tensor logits = s.run(Map.of("input_ids", ids)).values().iterator().next();
 * }
 * }</pre>
 *
 * Inputs: {@code input_ids} (i64 [batch, seq]), and for BERT {@code attention_mask} (1 keep, 0 pad)
 * and {@code token_type_ids}, both i64 [batch, seq]. The one output is the model's first output in
 * transformers: logits (batch, seq, vocab) for GPT-2 and LLaMA, last_hidden_state for BERT.
 */
public final class HfModel {
    /** The families built, by config.json's {@code model_type}. */
    public enum Family {
        GPT2("gpt2"), LLAMA("llama"), BERT("bert");

        private final String modelType;

        Family(String modelType) {
            this.modelType = modelType;
        }

        public String modelType() {
            return modelType;
        }
    }

    private final Path folder;
    private final Family family;
    private final Set<String> tensors;
    private final Map<String, DType> lowStored;
    private final Builder builder;
    private final int vocabSize;

    /** One family's architecture from its config fields. */
    sealed interface Builder permits Gpt2Builder, LlamaBuilder, BertBuilder {
        Graph build(int batch, int seq, Set<String> tensors, String where);
    }

    private HfModel(Path folder, Family family, Set<String> tensors, Map<String, DType> lowStored, Builder builder, int vocabSize) {
        this.lowStored = lowStored;
        this.vocabSize = vocabSize;
        this.folder = folder;
        this.family = family;
        this.tensors = tensors;
        this.builder = builder;
    }

    /**
     * Reads config.json and the safetensors' tensor names (the headers only: no weight is read).
     * A config Lantern cannot build is an {@link HfModelException} naming the field; a malformed
     * safetensors file a {@code SafetensorsException}.
     */
    public static HfModel open(Path folder) {
        HfConfig c = HfConfig.read(folder);
        String type = c.string("model_type");
        Family family = null;
        for (Family f : Family.values()) {
            if (f.modelType.equals(type)) {
                family = f;
            }
        }
        if (family == null) {
            throw c.unsupported("model_type", HfConfig.quote(type), "\"gpt2\", \"llama\" or \"bert\"");
        }
        Builder builder = switch (family) {
            case GPT2 -> Gpt2Builder.of(c);
            case LLAMA -> LlamaBuilder.of(c);
            case BERT -> BertBuilder.of(c);
        };
        Set<String> names;
        Map<String, DType> low = new HashMap<>();
        try (SafetensorsModel m = SafetensorsModel.open(folder)) {
            names = Set.copyOf(new LinkedHashSet<>(m.names()));
            for (String n : names) {
                DType d = m.tensor(n).dtype().irType();
                if (d == DType.BF16 || d == DType.F16) {
                    low.put(n, d);
                }
            }
        }
        return new HfModel(folder, family, names, Map.copyOf(low), builder, c.positive("vocab_size"));
    }

    /** The vocabulary size ({@code vocab_size}): token ids are in [0, vocabSize). */
    public int vocabSize() {
        return vocabSize;
    }

    /** The architecture family config.json names. */
    public Family family() {
        return family;
    }

    public Path folder() {
        return folder;
    }

    /**
     * The forward pass for inputs of shape (batch, seq), in f32. A parameter the checkpoint stores in
     * bf16 or f16 is declared so and widened by a cast (exact), so that the compiler keeps what is
     * read only in low precision, or only gathered, in its stored bytes. A sequence longer than the
     * model's positions, or a tensor the architecture needs and the checkpoint lacks, is an
     * {@link HfModelException}.
     */
    public Graph graph(int batch, int seq) {
        if (batch <= 0 || seq <= 0) {
            throw new HfModelException("batch", "batch " + batch + " and seq " + seq + " must be positive");
        }
        String where = folder.toString();
        return StoredDtypes.apply(builder.build(batch, seq, tensors, where), lowStored);
    }

    /** The checkpoint's tensors by name, memory-mapped: close after loading the session. */
    public Weights weights() {
        return Weights.safetensors(folder);
    }

    static void checkSeq(int seq, int positions, String field) {
        if (seq > positions) {
            throw new HfModelException(field, "seq " + seq + " is past the model's " + field + " " + positions);
        }
    }
}
