package dev.lantern.cli;

import dev.lantern.ir.LanternException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/** File output that is never left half-written: a temporary file beside the target, then a rename. */
final class Files2 {
    private Files2() {}

    static void writeAtomically(Path target, String text) {
        Path abs = target.toAbsolutePath();
        Path dir = abs.getParent();
        Path tmp = null;
        try {
            if (dir != null && !Files.isDirectory(dir)) {
                throw new LanternException("cannot write " + target + ": folder " + dir + " does not exist");
            }
            tmp = Files.createTempFile(dir, "." + abs.getFileName(), ".tmp");
            Files.writeString(tmp, text, StandardCharsets.UTF_8);
            try {
                Files.move(tmp, abs, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, abs, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            throw new LanternException("cannot write " + target + ": " + e.getMessage(), e);
        } finally {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // the rename already succeeded or the write failed; nothing else to clean
                }
            }
        }
    }

    static String read(Path p) {
        try {
            return Files.readString(p, StandardCharsets.UTF_8);
        } catch (java.nio.file.NoSuchFileException e) {
            throw new LanternException("no such file: " + p);
        } catch (java.nio.charset.MalformedInputException e) {
            throw new LanternException(p + " is not UTF-8 text");
        } catch (IOException e) {
            throw new LanternException("cannot read " + p + ": " + e.getMessage(), e);
        }
    }
}
