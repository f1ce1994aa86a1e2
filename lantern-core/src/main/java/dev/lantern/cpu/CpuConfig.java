package dev.lantern.cpu;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The CPU backend's two settings, read once from system properties:
 * {@code lantern.cpu.vector=false} turns the Vector API paths off (every kernel then runs its
 * scalar loop, which is also the tail of every vector loop), and {@code lantern.cpu.threads=N}
 * sets the worker count (default: available processors).
 */
public final class CpuConfig {
    private CpuConfig() {}

    /** Whether kernels use the Vector API. */
    public static final boolean VECTOR = !"false".equalsIgnoreCase(System.getProperty("lantern.cpu.vector", "true"));

    /** Worker threads, including the calling thread. */
    public static final int THREADS = Math.max(1, Integer.getInteger("lantern.cpu.threads", Runtime.getRuntime().availableProcessors()));

    /** The preferred float species: 8 lanes on AVX2, 16 on AVX-512. */
    public static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;

    /** Lanes of {@link #F}, or 1 when vectorisation is off (so {@code i < n - n % LANES} loops run no vector step). */
    public static final int LANES = VECTOR ? F.length() : 1;

    /** {@code n} rounded down to a multiple of the vector length: where the scalar tail starts. */
    public static int vectorBound(int n) {
        return VECTOR ? F.loopBound(n) : 0;
    }
}
