package dev.lantern.reference;

/**
 * How close a computed output is to a reference: the one error measure the tests, the demo and
 * the benchmarks report, so that a figure in one place means the same in another.
 */
public final class Accuracy {
    private Accuracy() {
    }

    /** ‖a − b‖₂ / ‖b‖₂ ({@code b} is the reference; an all-zero reference does not divide by zero). */
    public static double relErr(double[] a, double[] b) {
        double num = 0;
        double den = 0;
        for (int i = 0; i < a.length; i++) {
            double d = a[i] - b[i];
            num += d * d;
            den += b[i] * b[i];
        }
        return Math.sqrt(num / Math.max(den, Double.MIN_NORMAL));
    }
}
