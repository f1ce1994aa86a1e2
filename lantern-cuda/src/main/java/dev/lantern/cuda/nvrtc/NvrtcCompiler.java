package dev.lantern.cuda.nvrtc;

import dev.lantern.cuda.ffi.Nvrtc;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@link ModuleCache.Compiler} over NVRTC. Default options: the device's architecture
 * ({@code --gpu-architecture=sm_90}, so the output is SASS, not PTX left to the driver),
 * {@code -default-device}, {@code -std=c++17}, and {@code -I} the toolkit's include folder
 * when one holds cuda_bf16.h; the caller's options follow.
 */
public final class NvrtcCompiler implements ModuleCache.Compiler {
    private final Nvrtc nvrtc;
    private final Optional<Path> includeDir;
    private final String version;

    public NvrtcCompiler(Nvrtc nvrtc) {
        this(nvrtc, CudaToolkit.includeDir());
    }

    public NvrtcCompiler(Nvrtc nvrtc, Optional<Path> includeDir) {
        this.nvrtc = nvrtc;
        this.includeDir = includeDir;
        int[] v = nvrtc.version();
        this.version = "nvrtc " + v[0] + "." + v[1];
    }

    public List<String> options(String arch, List<String> extra) {
        List<String> opts = new ArrayList<>();
        opts.add("--gpu-architecture=" + arch);
        opts.add("-default-device");
        opts.add("-std=c++17");
        includeDir.ifPresent(p -> opts.add("-I" + p));
        opts.addAll(extra);
        return opts;
    }

    @Override
    public Result compile(String source, String name, String arch, List<String> options) {
        Nvrtc.Output out = nvrtc.compile(source, name + ".cu", options(arch, options));
        return new Result(out.cubin(), out.log());
    }

    @Override
    public String version() {
        return version;
    }
}
