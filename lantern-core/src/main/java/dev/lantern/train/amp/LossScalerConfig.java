package dev.lantern.train.amp;

import dev.lantern.ir.DType;

/**
 * The dynamic loss scaler's settings, named after {@code torch.cuda.amp.GradScaler}'s, plus a
 * floor and the recovery policy.
 *
 * @param initScale the scale before the first step (GradScaler: 2^16)
 * @param growthFactor the scale's factor after {@code growthInterval} clean steps in a row (2)
 * @param backoffFactor the scale's factor after an overflow (0.5)
 * @param growthInterval clean steps in a row before the scale grows (2000)
 * @param minScale the floor: a backoff never takes the scale below it
 * @param maxConsecutiveOverflows K: the K-th overflowing step in a row raises
 *     {@link LossScaleException}; 0 never raises
 */
public record LossScalerConfig(float initScale, float growthFactor, float backoffFactor, int growthInterval,
                               float minScale, int maxConsecutiveOverflows) {
    /** Checks the ranges; a growth and backoff factor of 1 give a fixed scale that still skips overflows. */
    public LossScalerConfig {
        if (!(initScale > 0) || !Float.isFinite(initScale)) {
            throw new IllegalArgumentException("initial scale must be positive and finite, got " + initScale);
        }
        if (!(growthFactor >= 1) || !Float.isFinite(growthFactor)) {
            throw new IllegalArgumentException("growth factor must be at least 1, got " + growthFactor);
        }
        if (!(backoffFactor > 0 && backoffFactor <= 1)) {
            throw new IllegalArgumentException("backoff factor must be in (0, 1], got " + backoffFactor);
        }
        if (growthInterval < 1) {
            throw new IllegalArgumentException("growth interval must be at least 1, got " + growthInterval);
        }
        if (!(minScale > 0) || minScale > initScale) {
            throw new IllegalArgumentException("min scale must be in (0, initial scale], got " + minScale);
        }
        if (maxConsecutiveOverflows < 0) {
            throw new IllegalArgumentException("max consecutive overflows must be non-negative, got " + maxConsecutiveOverflows);
        }
    }

    /**
     * GradScaler's defaults (2^16, ×2 after 2000 clean steps, ×0.5 on overflow), a floor of 1 and
     * recovery after 32 overflows in a row (16 backoffs take 2^16 to the floor; 16 more tries there).
     */
    public static LossScalerConfig defaults() {
        return new LossScalerConfig(65536f, 2f, 0.5f, 2000, 1f, 32);
    }

    /**
     * The settings for gradients computed in {@code lowType}: f16 gets {@link #defaults()}; bf16,
     * whose range is f32's, a fixed scale of 1 that still detects non-finite gradients, skips
     * those steps and applies the recovery policy; f32 the same.
     */
    public static LossScalerConfig forType(DType lowType) {
        return lowType == DType.F16 ? defaults() : new LossScalerConfig(1f, 1f, 1f, 2000, 1f, 32);
    }

    /** This config with another floor. */
    public LossScalerConfig withMinScale(float min) {
        return new LossScalerConfig(initScale, growthFactor, backoffFactor, growthInterval, min, maxConsecutiveOverflows);
    }

    /** This config with another recovery threshold K (0: never raise). */
    public LossScalerConfig withMaxConsecutiveOverflows(int k) {
        return new LossScalerConfig(initScale, growthFactor, backoffFactor, growthInterval, minScale, k);
    }

    /** This config with another growth interval. */
    public LossScalerConfig withGrowthInterval(int interval) {
        return new LossScalerConfig(initScale, growthFactor, backoffFactor, interval, minScale, maxConsecutiveOverflows);
    }
}
