package dev.lantern.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** The graphs under examples/, copied to the test class path (/examples/NAME), so that the gpu bundle has them too. */
final class Examples {
    private Examples() {}

    static String text(String name) {
        try (InputStream in = Examples.class.getResourceAsStream("/examples/" + name)) {
            if (in == null) {
                throw new IllegalStateException("no /examples/" + name + " on the test class path");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The example written to {@code dir}, for a command that takes a file name. */
    static Path file(Path dir, String name) {
        try {
            return Files.writeString(dir.resolve(name), text(name));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
