package dev.lantern.cuda.codegen;

import java.util.List;

/**
 * One generated kernel, ready for NVRTC: a self-contained translation unit whose only
 * includes are {@code <cuda_bf16.h>} and {@code <cuda_fp16.h>}, with one
 * {@code extern "C" __global__} entry named {@link #entry}.
 *
 * @param entry   the unmangled kernel name (for cuModuleGetFunction)
 * @param source  the CUDA C text
 * @param params  the kernel's arguments in order
 * @param rule    launch configuration as a function of the run-time sizes
 * @param problem the sizes the spec was rendered for (so {@link #launch()} needs no argument)
 * @param variant which path the renderer chose ("vector", "general", "mma", ...), for dumps and tests
 */
public record CudaKernelSource(String entry, String source, List<KernelParam> params, LaunchRule rule,
                               ProblemSize problem, String variant) {
    public CudaKernelSource {
        params = List.copyOf(params);
    }

    /**
     * Whether every pointer argument must be 16-byte aligned (the vector, row-in-registers and
     * tensor-core paths use 16-byte loads; for attention the seq strides must also be multiples
     * of 16 bytes). The launcher checks this before the launch and raises a typed error, since
     * a misaligned 16-byte access faults the context. General paths need natural alignment only.
     */
    public boolean requiresAligned16() {
        return switch (variant) {
            case "vector", "registers", "mma", "wgmma" -> true;
            default -> false;
        };
    }

    /** Whether the kernel uses sm_90a-only instructions (wgmma) and must be built for {@code sm_90a}. */
    public boolean archSpecific() {
        return variant.equals("wgmma");
    }

    /** The nvcc / NVRTC architecture for this kernel on {@code target}: sm_90 or, arch-specific, sm_90a. */
    public String arch(CudaTarget target) {
        return archSpecific() ? target.arch() + "a" : target.arch();
    }

    /**
     * How many of the parameters are tensor maps (always the last ones): a step passes the
     * ordinary arguments, and the launcher appends the maps the TMA variant declares.
     */
    public int tensorMapCount() {
        return (int) params.stream().filter(p -> p.cType().contains("LtTensorMap")).count();
    }

    /** The launch configuration for the spec's own sizes. */
    public LaunchConfig launch() {
        return rule.launch(problem);
    }

    /** The launch configuration for other run-time sizes of the same compiled kernel. */
    public LaunchConfig launch(ProblemSize size) {
        return rule.launch(size);
    }

    /**
     * SHA-256 of the CUDA C text, hex: with the arch, NVRTC and driver versions, the module
     * cache key of this kernel (the text already holds every specialisation constant).
     */
    public String sourceHash() {
        try {
            byte[] d = java.security.MessageDigest.getInstance("SHA-256")
                    .digest(source.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return java.util.HexFormat.of().formatHex(d);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every JDK", e);
        }
    }
}
