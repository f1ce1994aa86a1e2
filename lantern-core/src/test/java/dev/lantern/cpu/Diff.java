package dev.lantern.cpu;

import dev.lantern.reference.RefTensor;
import dev.lantern.tensor.Tensor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Comparison against the float64 reference: ‖out − ref‖ / ‖ref‖, where any NaN fails. */
final class Diff {
    private Diff() {}

    static double relErr(Tensor out, RefTensor ref) {
        assertEquals(ref.shape().numel(), out.numel(), "element count");
        double num = 0;
        double den = 0;
        for (int i = 0; i < ref.data().length; i++) {
            double o = out.get(i);
            if (Double.isNaN(o) || Double.isInfinite(o) && !Double.isInfinite(ref.data()[i])) {
                return Double.POSITIVE_INFINITY;
            }
            double d = o - ref.data()[i];
            num += d * d;
            den += ref.data()[i] * ref.data()[i];
        }
        return den == 0 ? Math.sqrt(num) : Math.sqrt(num / den);
    }

    static void assertClose(Tensor out, RefTensor ref, double tol, String what) {
        assertTrue(nonTrivial(ref), what + ": the reference is all zeros; the test would prove nothing");
        double e = relErr(out, ref);
        assertTrue(e <= tol, what + ": relative error " + e + " > " + tol);
    }

    static boolean nonTrivial(RefTensor ref) {
        for (double v : ref.data()) {
            if (v != 0) {
                return true;
            }
        }
        return false;
    }
}
