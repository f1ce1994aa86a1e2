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
}
