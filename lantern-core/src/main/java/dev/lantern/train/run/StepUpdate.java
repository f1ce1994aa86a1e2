package dev.lantern.train.run;

import dev.lantern.train.AdamWConfig;
import dev.lantern.train.SgdConfig;

/**
 * The optimizer update that ends a {@link DeviceStep}, and how it is decided from what the step
 * measured, as the host's {@code DynamicLossScaler} and {@code GradClip} decide: the global norm
 * {@code f32(sqrt(sumSquares))} (NaN when a gradient holds an inf or a NaN), the clip coefficient
 * {@code maxNorm / (norm + 1e-6f)}, applied when it is not at least 1 (a NaN coefficient clips to
 * NaN, as on the CPU), and the step skipped on a non-finite gradient when a loss scaler runs.
 * A device may take this decision itself, without a host round trip between the gradients and the
 * update; it must then take exactly {@link #decide}'s.
 *
 * @param rule          AdamW's or SGD's step
 * @param maxNorm       the global-norm clip (0: none)
 * @param skipNonFinite skip the update when a gradient holds an inf or a NaN (a loss scaler's overflow)
 */
public record StepUpdate(Rule rule, float maxNorm, boolean skipNonFinite) {
    /** The optimizer's step. */
    public sealed interface Rule permits AdamWRule, SgdRule {}

    /** AdamW's step {@code t} (from 1) at learning rate {@code lr}. */
    public record AdamWRule(AdamWConfig config, double lr, long t) implements Rule {}

    /** SGD's step after {@code stepsTaken} applied ones at learning rate {@code lr}. */
    public record SgdRule(SgdConfig config, double lr, long stepsTaken) implements Rule {}

    /** What {@link #decide} found: whether the update applies, the global norm, whether it clips and by what. */
    public record Decision(boolean applied, float norm, boolean clip, float coef) {}

    /** Checks the clip. */
    public StepUpdate {
        if (rule == null || !(maxNorm >= 0)) {
            throw new IllegalArgumentException("a step update needs a rule and a clip norm of 0 or more, not " + rule + ", " + maxNorm);
        }
    }

    /** The decision for gradients that measured {@code m}. */
    public Decision decide(DeviceStep.Measured m) {
        boolean finite = m.nonFinite().isEmpty();
        float norm = finite ? (float) Math.sqrt(m.sumSquares()) : Float.NaN;
        float coef = maxNorm > 0 ? maxNorm / (norm + 1e-6f) : 1f;
        return new Decision(finite || !skipNonFinite, norm, maxNorm > 0 && !(coef >= 1f), coef);
    }
}
