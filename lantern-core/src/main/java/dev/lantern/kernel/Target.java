package dev.lantern.kernel;

import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The machine kernels are built for, as data: architecture name, vector width in f32 lanes and
 * the versions of whatever compiles the kernels (for the CPU, the JDK whose C2 JIT compiles the
 * Vector API code). A CUDA target will carry its sm_XY and NVRTC version here.
 */
public record Target(String arch, int vectorLanes, SortedMap<String, String> compilers) {
    public Target {
        compilers = java.util.Collections.unmodifiableSortedMap(new TreeMap<>(compilers));
    }

    /** This machine's CPU: {@code cpu-amd64-v256} with the preferred Vector API width. */
    public static Target cpu() {
        int bits = jdk.incubator.vector.FloatVector.SPECIES_PREFERRED.vectorBitSize();
        return new Target("cpu-" + System.getProperty("os.arch") + "-v" + bits, bits / 32,
                new TreeMap<>(Map.of("jdk", Integer.toString(Runtime.version().feature()), "lantern-cpu-kernels", "1")));
    }

    /**
     * Kernel descriptions for the CUDA backend. Only the name lives here: the GPU facts
     * (sm_XY, shared memory, tiles) are lantern-cuda's {@code CudaTarget}, and the CUDA
     * renderer hashes its generated C into its own module keys.
     */
    public static Target cuda() {
        return new Target("cuda", 8, new TreeMap<>(Map.of("lantern-cuda-codegen", "1")));
    }

    /**
     * Whether this target's attention kernels write the row log-sum-exp that a training step's
     * attention_lse reads ({@link SavedLse}): the CUDA kernels do; the CPU computes attention_lse
     * as its own kernel.
     */
    public boolean savesAttentionLse() {
        return arch.equals("cuda");
    }
}
