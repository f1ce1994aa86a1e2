package dev.lantern.train;

/**
 * SGD's hyperparameters, with {@code torch.optim.SGD}'s meaning: weight decay is L2 (added to
 * the gradient), the momentum buffer starts as the first gradient, and Nesterov looks ahead along
 * the buffer.
 *
 * @param lr learning rate
 * @param momentum momentum factor (0: plain SGD, no buffer)
 * @param dampening dampening of the gradient in the buffer update
 * @param nesterov Nesterov momentum (needs momentum &gt; 0 and dampening 0)
 * @param weightDecay L2 penalty coefficient
 */
public record SgdConfig(double lr, double momentum, double dampening, boolean nesterov, double weightDecay) {
    /** Checks the ranges PyTorch checks. */
    public SgdConfig {
        if (!(lr >= 0) || !(momentum >= 0) || !(weightDecay >= 0) || !Double.isFinite(dampening)) {
            throw new IllegalArgumentException("invalid SGD config " + lr + ", " + momentum + ", " + dampening + ", " + weightDecay);
        }
        if (nesterov && (momentum <= 0 || dampening != 0)) {
            throw new IllegalArgumentException("Nesterov momentum requires a momentum and zero dampening");
        }
    }

    /** Momentum SGD: dampening 0, no Nesterov, no weight decay. */
    public static SgdConfig momentum(double lr, double momentum) {
        return new SgdConfig(lr, momentum, 0, false, 0);
    }
}
