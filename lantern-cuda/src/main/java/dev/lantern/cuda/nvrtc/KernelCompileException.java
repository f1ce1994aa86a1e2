package dev.lantern.cuda.nvrtc;

import java.nio.file.Path;

/**
 * Generated CUDA C did not compile. Carries NVRTC's log and the path where the source was
 * written, so the failure can be reproduced with {@code nvcc -arch=sm_90 -cubin <file>}.
 */
public final class KernelCompileException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String log;
    private final transient Path sourceFile;

    public KernelCompileException(String name, String arch, String log, Path sourceFile) {
        super("NVRTC failed to compile '" + name + "' for " + arch + "; source written to " + sourceFile
                + " (reproduce: nvcc -arch=" + arch + " -std=c++17 -cubin " + sourceFile + ")\n" + log.strip());
        this.log = log;
        this.sourceFile = sourceFile;
    }

    public String log() {
        return log;
    }

    public Path sourceFile() {
        return sourceFile;
    }
}
