package dev.lantern.engine;

import dev.lantern.ir.LanternException;

/**
 * Strict determinism mode ({@link CompileOptions#deterministic()}) refused a kernel that cannot
 * promise the same bits on every run: one that combines partial results with atomics, or a GEMM
 * for which the library offers only split-K algorithms. The message names the kernel and why;
 * {@link #kernel()} gives the name alone.
 */
public final class NondeterministicKernelException extends LanternException {
    private final String kernel;

    public NondeterministicKernelException(String kernel, String why) {
        super("strict determinism mode: kernel " + kernel + " cannot be deterministic: " + why
                + " (run without --deterministic, or see docs/determinism.md)");
        this.kernel = kernel;
    }

    public String kernel() {
        return kernel;
    }
}
