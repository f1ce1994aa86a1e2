package dev.lantern.onnx;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.lantern.engine.CompileOptions;
import java.nio.file.Path;
import java.util.OptionalLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The vocabulary behind a token-id input, found through the casts and reshapes exporters put
 * between the ids and the embedding's Gather (the dynamo exporter views them [-1] first): what
 * {@code lantern run MODEL.onnx --batch B --seq S} draws random ids from.
 */
class EmbeddingRowsTest {
    @ParameterizedTest
    @ValueSource(strings = {"gpt2", "llama", "bert"})
    void theFixturesVocabularyIsFound(String family) {
        OnnxModel m = OnnxModel.open(Path.of("src/test/resources/models", family, "model.onnx"), CompileOptions.defaults());
        assertEquals(OptionalLong.of(256), m.embeddingRows("input_ids"));
    }
}
