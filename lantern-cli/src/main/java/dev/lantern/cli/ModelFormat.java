package dev.lantern.cli;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Which kind of model file {@code run} and {@code compile} were given: an ONNX model or IR text. By the
 * extension ({@code .onnx}, {@code .ir}); any other name by its first byte: an ONNX file is a protobuf
 * {@code ModelProto}, which exporters start with field 1 ({@code ir_version}, a varint: byte 0x08), a
 * byte IR text never starts with.
 */
final class ModelFormat {
    private static final int ONNX_FIRST_BYTE = 0x08;

    private ModelFormat() {}

    static boolean isOnnx(String file) {
        String lower = file.toLowerCase(Locale.ROOT);
        if (lower.endsWith(".onnx")) {
            return true;
        }
        if (lower.endsWith(".ir")) {
            return false;
        }
        Path p = Path.of(file);
        if (!Files.isRegularFile(p)) {
            return false; // the IR path names a missing or unreadable file
        }
        try (InputStream in = Files.newInputStream(p)) {
            return in.read() == ONNX_FIRST_BYTE;
        } catch (IOException e) {
            return false;
        }
    }
}
