package dev.lantern.cli;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where the checkout is, for commands that use its scripts (the PyTorch peer): the
 * {@code lantern.home} system property the {@code ./lantern} launcher sets, else the nearest folder
 * from the working directory up that holds the launcher.
 */
final class Repository {
    private Repository() {}

    static Path root() {
        String home = System.getProperty("lantern.home");
        if (home != null && !home.isBlank()) {
            return Path.of(home);
        }
        Path cwd = Path.of("").toAbsolutePath();
        for (Path p = cwd; p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("lantern")) && Files.isDirectory(p.resolve("scripts"))) {
                return p;
            }
        }
        return cwd;
    }
}
