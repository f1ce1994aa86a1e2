package dev.lantern.weights;

import java.io.IOException;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Resolves a relative path that a model file names (a shard, an external-data file) against the
 * model's folder, refusing any that could reach outside it. The rules, strictest first: no empty
 * name, no NUL, not absolute, no {@code ..} step anywhere (even one that would come back: a model
 * has no reason to write one), and, where the file exists, its real path (links followed) must
 * lie inside the folder's real path. A file that does not exist is returned as resolved; opening
 * it then fails as a missing file, inside the folder.
 */
public final class ContainedPath {
    private ContainedPath() {}

    /**
     * {@code folder.resolve(name)}, checked.
     *
     * @param what what the name is, for the message, e.g. {@code "shard"}
     * @throws UnsafePathException when {@code name} could lead out of {@code folder}
     */
    public static Path resolve(Path folder, String name, String what) {
        String quoted = JsonParser.quoteForMessage(name);
        if (name.isEmpty()) {
            throw new UnsafePathException(what + " path is empty (in " + folder + ")");
        }
        if (name.indexOf('\0') >= 0) {
            throw new UnsafePathException(what + " path " + quoted + " contains a NUL character (in " + folder + ")");
        }
        Path rel;
        try {
            rel = Path.of(name);
        } catch (InvalidPathException e) {
            throw new UnsafePathException(what + " path " + quoted + " is not a valid path: " + e.getReason());
        }
        if (rel.isAbsolute() || rel.getRoot() != null || name.startsWith("/") || name.startsWith("\\")) {
            throw new UnsafePathException(what + " path " + quoted + " is absolute; it must be relative to " + folder);
        }
        for (Path part : rel) {
            if (part.toString().equals("..")) {
                throw new UnsafePathException(what + " path " + quoted + " has a '..' step; it must stay inside " + folder);
            }
        }
        Path resolved = folder.resolve(rel).normalize();
        if (!Files.exists(resolved, LinkOption.NOFOLLOW_LINKS)) {
            return resolved;
        }
        try {
            Path realFolder = folder.toRealPath();
            Path real = resolved.toRealPath();
            if (!real.startsWith(realFolder)) {
                throw new UnsafePathException(what + " path " + quoted + " leads to " + real + ", outside " + realFolder
                        + " (through a link)");
            }
            return real;
        } catch (IOException e) {
            // a dangling link, or a link loop: nothing inside the folder to open
            throw new UnsafePathException(what + " path " + quoted + " cannot be resolved inside " + folder + ": " + e);
        }
    }
}
