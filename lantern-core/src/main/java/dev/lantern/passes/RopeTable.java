package dev.lantern.passes;

import dev.lantern.ir.Shape;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Reads the base of a rotary embedding from its cos and sin tables and checks every entry against
 * the rope op's formula: C[.., p, j] = cos(p·θ_i), S[.., p, j] = sin(p·θ_i), i = j mod d/2,
 * θ_i = base^(−2i/d), positions p along axis −2 from 0.
 *
 * <p>The base: θ₁ from row 1 (atan2 of S and C), refined on the last row (the angle unwrapped to
 * the multiple of 2π nearest (s−1)·θ₁), base = θ₁^(−d/2). That estimate carries the table's f32
 * rounding, amplified d/2 times, so the candidates tried are the estimate rounded to 1, 2, … 7
 * significant digits and then the estimate itself; the first under which every entry of both
 * tables checks is taken. The check, not the rounding, decides: a candidate is only a guess until
 * all entries agree with it.
 *
 * <p>Tolerance per entry: 4·2⁻²³·(1 + |angle|). An exporter computes the angle p·θ in f32 (θ by a
 * pow and a reciprocal, then a product: a few ulps of the angle, relative), then cos or sin in f32
 * (an ulp of a value ≤ 1); a table from float64 is closer still. A wrong entry, a wrong base, scaled
 * frequencies or positions from another offset are off by far more (1e-3 and up at the sizes
 * where they matter).
 */
final class RopeTable {
    private RopeTable() {}

    private static final double ULP = Math.pow(2, -23);

    /** The base that both tables agree with for x of shape {@code x}, or {@code null}. */
    static Double base(ConstantValues.Table cos, Shape cosShape, ConstantValues.Table sin, Shape sinShape, Shape x) {
        if (cos == null || sin == null || !fits(cosShape, x) || !fits(sinShape, x)) {
            return null;
        }
        int s = x.dim(-2);
        int d = x.last();
        for (double b : candidates(cos, sin, s, d)) {
            if (Double.isFinite(b) && b > 0 && matches(cos, s, d, b, true) && matches(sin, s, d, b, false)) {
                return b;
            }
        }
        return null;
    }

    /** The table is (.., s, d) with leading axes that broadcast into x's without enlarging them. */
    private static boolean fits(Shape t, Shape x) {
        if (t.rank() < 2 || t.rank() > x.rank() || t.dim(-1) != x.dim(-1) || t.dim(-2) != x.dim(-2)) {
            return false;
        }
        for (int i = 3; i <= t.rank(); i++) {
            if (t.dim(-i) != 1 && t.dim(-i) != x.dim(-i)) {
                return false;
            }
        }
        return true;
    }

    private static Set<Double> candidates(ConstantValues.Table cos, ConstantValues.Table sin, int s, int d) {
        Set<Double> c = new LinkedHashSet<>();
        if (s < 2 || d < 4) {
            c.add(10000.0); // θ₁ is not in the table (one position, or θ₀ = 1 only): any base gives it
            return c;
        }
        double t1 = Math.atan2(sin.at(d + 1), cos.at(d + 1)); // row 1, column 1
        int last = s - 1;
        double a = Math.atan2(sin.at((long) last * d + 1), cos.at((long) last * d + 1));
        double turns = Math.rint((last * t1 - a) / (2 * Math.PI));
        double theta = (a + 2 * Math.PI * turns) / last;
        if (!(theta > 0)) {
            return c;
        }
        double estimate = Math.pow(theta, -d / 2.0);
        if (!Double.isFinite(estimate)) {
            return c;
        }
        for (int digits = 1; digits <= 7; digits++) {
            c.add(new BigDecimal(estimate).round(new MathContext(digits)).doubleValue());
        }
        c.add(estimate);
        return c;
    }

    private static boolean matches(ConstantValues.Table t, int s, int d, double base, boolean cos) {
        int h = d / 2;
        double[] theta = new double[h];
        for (int i = 0; i < h; i++) {
            theta[i] = Math.pow(base, -2.0 * i / d);
        }
        for (long k = 0; k < t.size(); k++) {
            long p = k / d % s;
            double angle = p * theta[(int) (k % d % h)];
            double want = cos ? Math.cos(angle) : Math.sin(angle);
            if (!(Math.abs(t.at(k) - want) <= 4 * ULP * (1 + Math.abs(angle)))) {
                return false;
            }
        }
        return true;
    }
}
