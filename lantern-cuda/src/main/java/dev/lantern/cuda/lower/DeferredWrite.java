package dev.lantern.cuda.lower;

import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.Operand;
import java.util.Arrays;
import java.util.function.Predicate;

/**
 * When a kernel's write may move to a later kernel that computes it in the same pass (a norm's weight
 * gradient into its dx kernel, {@link NormWeightGradLowerer}): {@link #partner} finds that later kernel
 * and says whether the move is safe.
 */
final class DeferredWrite {
    private DeferredWrite() {}

    /**
     * The first kernel after {@code first} that {@code isPartner} accepts, when writing {@code first}'s
     * output there is safe, else null. Safe: no kernel in between reads the output, and the output is
     * read after the partner or is a graph output, so its buffer is still the output's own when the
     * partner writes it. The partner's inputs are intact in between: they are its inputs.
     */
    static Kernel partner(Kernel first, LoweringContext cx, Predicate<Kernel> isPartner) {
        String out = first.output().value();
        Kernel partner = null;
        for (Kernel k : cx.model.kernels()) {
            if (k.index() <= first.index()) {
                continue;
            }
            if (partner == null) {
                if (isPartner.test(k)) {
                    partner = k;
                } else if (reads(k, out)) {
                    return null; // read before the partner: the output must be written where it is
                }
            } else if (reads(k, out)) {
                return partner;
            }
        }
        return partner != null && cx.outputStorage.contains(out) ? partner : null;
    }

    static boolean reads(Kernel k, String storage) {
        return k.inputs().stream().anyMatch(o -> o.storage().equals(storage) || o.value().equals(storage));
    }

    /** Whether two operands read the same bytes the same way: storage, dtype, shape, strides and extent. */
    static boolean same(Operand a, Operand b) {
        return a.storage().equals(b.storage()) && a.dtype() == b.dtype() && a.shape().equals(b.shape())
                && Arrays.equals(a.strides(), b.strides()) && a.storageBytes() == b.storageBytes();
    }
}
