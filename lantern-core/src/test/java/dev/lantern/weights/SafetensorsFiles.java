package dev.lantern.weights;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Hand-made safetensors bytes for tests: a header written as text, framed with its length. */
final class SafetensorsFiles {
    private SafetensorsFiles() {}

    /** {@code [u64 length of json][json][data]}. */
    static byte[] file(String json, byte[] data) {
        return file(json.getBytes(StandardCharsets.UTF_8), data);
    }

    static byte[] file(byte[] json, byte[] data) {
        return ByteBuffer.allocate(8 + json.length + data.length).order(ByteOrder.LITTLE_ENDIAN)
                .putLong(json.length).put(json).put(data).array();
    }

    /** {@code n} bytes counting up from 1 (never all zeros, so a misplaced slice shows). */
    static byte[] data(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i + 1);
        }
        return b;
    }

    static Path write(Path dir, String name, byte[] bytes) throws IOException {
        return Files.write(dir.resolve(name), bytes);
    }
}
