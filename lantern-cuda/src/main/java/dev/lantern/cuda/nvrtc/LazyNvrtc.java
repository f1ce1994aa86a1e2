package dev.lantern.cuda.nvrtc;

import dev.lantern.cuda.ffi.CudaLibraries;
import dev.lantern.cuda.ffi.CudaUnavailableException;

import java.util.List;

/**
 * NVRTC loaded on the first kernel that needs compiling, not when a module cache is made: a program
 * whose kernels are all {@link PrebuiltCubins} never loads it. Without NVRTC (or with
 * {@link PrebuiltCubins#DISABLE_NVRTC_ENV}) a compile returns no cubin and a log saying why, which
 * the cache raises as a {@link KernelCompileException} naming the kernel.
 */
final class LazyNvrtc implements ModuleCache.Compiler {
    private final CudaLibraries libraries;
    private volatile NvrtcCompiler nvrtc;
    private volatile String unavailable;

    LazyNvrtc(CudaLibraries libraries) {
        this.libraries = libraries;
    }

    private synchronized NvrtcCompiler nvrtc() {
        if (nvrtc == null && unavailable == null) {
            if (PrebuiltCubins.nvrtcDisabled()) {
                unavailable = "NVRTC disabled by " + PrebuiltCubins.DISABLE_NVRTC_ENV + "=1";
            } else {
                try {
                    nvrtc = new NvrtcCompiler(libraries.nvrtc());
                } catch (CudaUnavailableException | LinkageError e) {
                    unavailable = "NVRTC not available: " + e.getMessage();
                }
            }
        }
        return nvrtc;
    }

    @Override
    public Result compile(String source, String name, String arch, List<String> options) {
        NvrtcCompiler c = nvrtc();
        if (c == null) {
            return new Result(null, unavailable + " (and the kernel is not among the prebuilt cubins of a package)");
        }
        return c.compile(source, name, arch, options);
    }

    @Override
    public String version() {
        NvrtcCompiler c = nvrtc();
        return c == null ? "nvrtc unavailable" : c.version();
    }
}
