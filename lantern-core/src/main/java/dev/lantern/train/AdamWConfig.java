package dev.lantern.train;

/**
 * AdamW's hyperparameters, with {@code torch.optim.AdamW}'s meaning and defaults: decoupled
 * weight decay ({@code p -= lr * weightDecay * p} before the Adam update), bias-corrected
 * moments, {@code eps} added outside the square root.
 *
 * @param lr learning rate
 * @param beta1 decay of the first moment
 * @param beta2 decay of the second moment
 * @param eps added to the denominator, outside the square root
 * @param weightDecay decoupled weight decay coefficient
 */
public record AdamWConfig(double lr, double beta1, double beta2, double eps, double weightDecay) {
    /** Checks the ranges PyTorch checks. */
    public AdamWConfig {
        if (!(lr >= 0) || !(eps >= 0) || !(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1) || !(weightDecay >= 0)) {
            throw new IllegalArgumentException("invalid AdamW config lr=" + lr + " betas=(" + beta1 + ", " + beta2
                    + ") eps=" + eps + " weight_decay=" + weightDecay);
        }
    }

    /** PyTorch's defaults: betas (0.9, 0.999), eps 1e-8, weight decay 0.01. */
    public static AdamWConfig defaults(double lr) {
        return new AdamWConfig(lr, 0.9, 0.999, 1e-8, 0.01);
    }
}
