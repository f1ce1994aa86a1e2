package dev.lantern.runtime;

/** Loaded device code (a cubin on CUDA) from which kernels are looked up by name. */
public interface Module extends AutoCloseable {
    /** The cache key under which this module was built and stored. */
    String key();

    Kernel kernel(String name);

    @Override
    void close();

    /** One entry point of a module. */
    interface Kernel {
        String name();

        /**
         * Launches on {@code stream} with grid and block sizes and the given arguments
         * (Long for pointers and 64-bit ints, Integer, Float).
         */
        void launch(Stream stream, int[] grid, int[] block, int sharedBytes, Object... args);
    }
}
