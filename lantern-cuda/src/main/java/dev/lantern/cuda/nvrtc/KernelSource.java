package dev.lantern.cuda.nvrtc;

import java.util.List;

/**
 * CUDA C to compile: what the module cache keys on besides the target.
 *
 * @param name     program name for diagnostics and failure files, e.g. "fused_add_gelu"
 * @param code     the CUDA C source (kernels declared extern "C")
 * @param options  extra compiler options beyond the defaults (arch, -std, includes), e.g. ["-lineinfo"]
 * @param specKey  the caller's specialisation string (dtype, layout, tile, constants), e.g. "bf16/row/128x64"
 * @param archSpecific whether the code uses arch-specific instructions ({@code wgmma}): then it is
 *                 built for the device's "a" target ({@code sm_90a}), which runs on that exact chip only
 */
public record KernelSource(String name, String code, List<String> options, String specKey, boolean archSpecific) {
    public KernelSource {
        if (name == null || name.isBlank() || !name.matches("[A-Za-z0-9_.-]+")) {
            throw new IllegalArgumentException("kernel source name must be [A-Za-z0-9_.-]+, got '" + name + "'");
        }
        options = List.copyOf(options);
        specKey = specKey == null ? "" : specKey;
    }

    public KernelSource(String name, String code, List<String> options, String specKey) {
        this(name, code, options, specKey, false);
    }

    public KernelSource(String name, String code) {
        this(name, code, List.of(), "");
    }

    /** The architecture to build for on a device of {@code deviceArch} ("sm_90" or "sm_90a"). */
    public String archFor(String deviceArch) {
        return archSpecific ? deviceArch + "a" : deviceArch;
    }
}
