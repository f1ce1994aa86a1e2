package dev.lantern.train.run;

/**
 * One training step as {@link Trainer#step()} reports it.
 *
 * @param step     steps completed after this one (skipped ones count)
 * @param loss     the batch's mean cross-entropy (unscaled)
 * @param applied  whether the optimizer stepped (false: the scaler found a non-finite gradient)
 * @param gradNorm the global gradient norm before clipping (NaN or inf on a skipped step)
 * @param scale    the loss scale this step used (1 without a scaler)
 * @param nanos    wall time of the step: forward, backward and optimizer
 */
public record StepResult(long step, double loss, boolean applied, double gradNorm, float scale, long nanos) {}
