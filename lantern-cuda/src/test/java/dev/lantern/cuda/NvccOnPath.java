package dev.lantern.cuda;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;

/** Whether nvcc is on the PATH: the {@code @Tag("nvcc")} tests skip themselves when it is not. */
public final class NvccOnPath {
    private NvccOnPath() {}

    public static boolean found() {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String dir : path.split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, "nvcc"))) {
                return true;
            }
        }
        return false;
    }
}
