package dev.lantern.cli;

import java.util.List;

/** The CUDA part of {@code doctor}. */
final class CudaInfo {
    private CudaInfo() {}

    static List<String> report() {
        return List.of("cuda      (bindings not built yet)");
    }
}
