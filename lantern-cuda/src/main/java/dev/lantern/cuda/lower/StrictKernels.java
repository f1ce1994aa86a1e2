package dev.lantern.cuda.lower;

import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.engine.NondeterministicKernelException;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Strict determinism mode's check of a generated kernel: no atomic read-modify-write, in CUDA C
 * ({@code atomicAdd}, {@code atomicCAS}, ...) or inline PTX ({@code atom.*}, {@code red.*}, and the tensor-memory
 * unit's reductions {@code cp.reduce.async.bulk*}, which add into global memory as atomics do).
 * Atomics make the order in which partial results combine depend on scheduling, so a float sum
 * built with them changes in the last bits from run to run. The check is conservative: it refuses
 * any atomic, also one that only counts (Lantern's kernels use none today; every reduction is a
 * fixed tree of warp shuffles and shared-memory steps inside one CTA).
 */
public final class StrictKernels {
    private StrictKernels() {}

    private static final Pattern ATOMIC = Pattern.compile(
            "\\batomic(?:Add|Sub|Exch|Min|Max|Inc|Dec|CAS|And|Or|Xor)(?:_block|_system)?\\s*\\(|\\b(?:atom|red)\\.[a-z]|\\bcp\\.reduce\\.");

    /** Throws {@link NondeterministicKernelException} naming {@code src}'s kernel when its source uses atomics. */
    public static void check(CudaKernelSource src) {
        check(src.entry(), src.source());
    }

    static void check(String kernel, String source) {
        Matcher m = ATOMIC.matcher(source);
        if (m.find()) {
            int line = 1 + (int) source.substring(0, m.start()).chars().filter(c -> c == '\n').count();
            throw new NondeterministicKernelException(kernel, "it uses atomics ('" + m.group().replaceAll("\\s*\\($", "")
                    + "' at line " + line + " of its CUDA source), whose combining order changes from run to run");
        }
    }
}
