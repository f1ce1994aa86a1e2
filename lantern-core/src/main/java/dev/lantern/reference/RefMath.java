package dev.lantern.reference;

/** Scalar float64 functions that java.lang.Math lacks, accurate to about 1e-14. */
public final class RefMath {
    private RefMath() {}

    private static final double TWO_OVER_SQRT_PI = 2 / Math.sqrt(Math.PI);

    /**
     * The error function. Taylor series below |x| = 3 (the terms' growth costs at most e^9 ≈ 8e3
     * of cancellation, leaving ~1e-12), a continued fraction for erfc above (Lentz's method).
     */
    public static double erf(double x) {
        if (Double.isNaN(x)) {
            return x;
        }
        double ax = Math.abs(x);
        if (ax < 3) {
            double term = x;
            double sum = x;
            double x2 = x * x;
            for (int n = 1; n < 200; n++) {
                term *= -x2 / n;
                double add = term / (2 * n + 1);
                sum += add;
                if (Math.abs(add) < 1e-17 * Math.abs(sum)) {
                    break;
                }
            }
            return TWO_OVER_SQRT_PI * sum;
        }
        double r = 1 - erfcLarge(ax);
        return x < 0 ? -r : r;
    }

    /** erfc(x) for x >= 3: exp(-x²)/√π · 1/(x + 1/2/(x + 1/(x + 3/2/(x + ...)))). */
    private static double erfcLarge(double x) {
        if (x > 27) {
            return 0;
        }
        // Continued fraction erfc(x) = exp(-x^2)/sqrt(pi) * 1/(x+ (1/2)/(x+ 1/(x+ (3/2)/(x+ ...))))
        double tiny = 1e-300;
        double f = x;
        double c = x;
        double d = 0;
        for (int n = 1; n < 300; n++) {
            double a = n / 2.0;
            d = x + a * d;
            d = Math.abs(d) < tiny ? tiny : d;
            c = x + a / c;
            c = Math.abs(c) < tiny ? tiny : c;
            d = 1 / d;
            double delta = c * d;
            f *= delta;
            if (Math.abs(delta - 1) < 1e-16) {
                break;
            }
        }
        return Math.exp(-x * x) / Math.sqrt(Math.PI) / f;
    }

    /** GELU, exact (erf) form: 0.5·x·(1 + erf(x/√2)). */
    public static double geluErf(double x) {
        return 0.5 * x * (1 + erf(x / Math.sqrt(2)));
    }

    /** GELU, tanh form: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). */
    public static double geluTanh(double x) {
        return 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x * x * x)));
    }

    public static double silu(double x) {
        return x / (1 + Math.exp(-x));
    }

    /** d/dx GELU, erf form: Φ(x) + x·φ(x). */
    public static double geluErfGrad(double x) {
        return 0.5 * (1 + erf(x / Math.sqrt(2))) + x * Math.exp(-0.5 * x * x) / Math.sqrt(2 * Math.PI);
    }

    /** d/dx GELU, tanh form: 0.5·(1 + t) + 0.5·x·(1 − t²)·√(2/π)·(1 + 3·0.044715·x²), t = tanh(u). */
    public static double geluTanhGrad(double x) {
        double c = Math.sqrt(2 / Math.PI);
        double t = Math.tanh(c * (x + 0.044715 * x * x * x));
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * 0.044715 * x * x);
    }

    /** d/dx SiLU: σ(x)·(1 + x·(1 − σ(x))). */
    public static double siluGrad(double x) {
        double s = 1 / (1 + Math.exp(-x));
        return s * (1 + x * (1 - s));
    }
}
