package dev.lantern.weights;

import dev.lantern.weights.JsonValue.JsonArray;
import dev.lantern.weights.JsonValue.JsonNumber;
import dev.lantern.weights.JsonValue.JsonObject;
import dev.lantern.weights.JsonValue.JsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.ValueLayout;
import java.net.URISyntaxException;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Differential test against the reference implementation (Python {@code safetensors} 0.8.0): the
 * fixture it wrote (src/test/resources/weights/make-fixtures.py) reads back with the dtypes,
 * shapes and bytes it recorded, float values as it meant them, and {@link SafetensorsWriter}
 * writes the same tensors to the very same bytes.
 */
class SafetensorsPythonTest {
    private static final ValueLayout.OfDouble F64_LE = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    @TempDir
    Path dir;

    private static Path resource(String name) throws URISyntaxException {
        return Path.of(SafetensorsPythonTest.class.getResource("/weights/" + name).toURI());
    }

    @Test
    void readsWhatTheReferenceWroteAndWritesItBackIdentically() throws Exception {
        Path fixture = resource("python-all.safetensors");
        JsonObject expected = (JsonObject) JsonParser.parse(Files.readAllBytes(resource("python-all.json")), 16);
        JsonObject tensors = (JsonObject) expected.members().get("tensors");
        SafetensorsWriter w = new SafetensorsWriter();
        try (SafetensorsFile f = SafetensorsFile.open(fixture)) {
            assertEquals(Map.of("format", "np"), f.metadata());
            assertEquals(tensors.members().keySet().stream().sorted().toList(), f.names().stream().sorted().toList());
            for (Map.Entry<String, JsonValue> e : tensors.members().entrySet()) {
                JsonObject want = (JsonObject) e.getValue();
                TensorView v = f.tensor(e.getKey());
                assertEquals(((JsonString) want.members().get("dtype")).value(), v.dtype().name(), e.getKey());
                long[] shape = ((JsonArray) want.members().get("shape")).elements().stream()
                        .mapToLong(x -> ((JsonNumber) x).longValueOrNull()).toArray();
                assertArrayEquals(shape, v.shape(), e.getKey());
                byte[] bytes = v.data().toArray(ValueLayout.JAVA_BYTE);
                assertEquals(((JsonString) want.members().get("sha256")).value(),
                        HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes)), e.getKey());
                if (want.members().get("values") instanceof JsonArray values) {
                    float[] got = v.toFloatArray();
                    assertEquals(values.elements().size(), got.length);
                    for (int i = 0; i < got.length; i++) {
                        double ref = Double.parseDouble(((JsonNumber) values.elements().get(i)).literal());
                        // f64 is checked at full width; the others are exact in f32
                        double g = v.dtype() == SafetensorsDType.F64 ? v.data().get(F64_LE, 8L * i) : got[i];
                        assertEquals(ref, g, 0.0, e.getKey() + "[" + i + "]");
                    }
                }
                w.add(e.getKey(), v.dtype(), v.shape(), v.data());
            }
            f.metadata().forEach(w::metadata);
            Path again = dir.resolve("again.safetensors");
            w.write(again);
            assertArrayEquals(Files.readAllBytes(fixture), Files.readAllBytes(again));
        }
    }
}
