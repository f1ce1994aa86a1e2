package dev.lantern.cli;

import dev.lantern.cuda.doctor.CudaDoctor;

import java.util.List;

/** The CUDA part of {@code doctor}: libraries, where they were looked for, driver and GPUs. */
final class CudaInfo {
    private CudaInfo() {}

    static List<String> report() {
        return CudaDoctor.report();
    }
}
