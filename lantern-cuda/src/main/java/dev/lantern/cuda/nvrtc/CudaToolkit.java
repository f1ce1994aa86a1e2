package dev.lantern.cuda.nvrtc;

import dev.lantern.cuda.ffi.LibraryLocator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Where the CUDA headers that generated kernels include (cuda_bf16.h, cuda_fp16.h) live.
 * NVRTC needs them on its include path unless it carries them built in.
 */
public final class CudaToolkit {
    private CudaToolkit() {}

    /** Folders tried for {@code cuda_bf16.h}, in order. */
    public static List<Path> includeCandidates(Map<String, String> env) {
        List<Path> out = new ArrayList<>();
        for (String var : List.of("CUDA_HOME", "CUDA_PATH")) {
            String v = env.get(var);
            if (v != null && !v.isBlank()) {
                out.add(Path.of(v, "include"));
            }
        }
        out.add(Path.of("/usr/local/cuda/include"));
        out.add(Path.of("/usr/local/cuda/targets/x86_64-linux/include"));
        // Next to a library folder of LANTERN_CUDA_LIBS or a pip wheel: <pkg>/lib -> <pkg>/include
        for (Path lib : LibraryLocator.fromEnvironment(env).searchDirs()) {
            if (lib.getParent() != null) {
                out.add(lib.getParent().resolve("include"));
            }
        }
        return out;
    }

    /** The first folder holding cuda_bf16.h, if any. */
    public static Optional<Path> includeDir() {
        return includeDir(System.getenv());
    }

    public static Optional<Path> includeDir(Map<String, String> env) {
        for (Path p : includeCandidates(env)) {
            if (Files.isRegularFile(p.resolve("cuda_bf16.h"))) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }
}
