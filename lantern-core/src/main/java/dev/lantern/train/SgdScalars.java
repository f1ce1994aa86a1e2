package dev.lantern.train;

/**
 * The f32 scalars of one SGD step, rounded from the double hyperparameters as PyTorch rounds its
 * Python scalars, as both the CPU's {@link Sgd#step} and the device optimizer's kernel take them,
 * so that the two compute the same bits from the same lines.
 *
 * @param weightDecay {@code f32(weight_decay)}
 * @param doDecay     whether weight decay is on
 * @param momentum    {@code f32(momentum)}
 * @param doMomentum  whether there is a momentum buffer
 * @param keep        {@code f32(1 - dampening)}
 * @param first       whether this is the first step (the buffer becomes the gradient)
 * @param nesterov    Nesterov look-ahead
 * @param negLr       {@code f32(-lr)}
 */
public record SgdScalars(float weightDecay, boolean doDecay, float momentum, boolean doMomentum, float keep, boolean first,
                         boolean nesterov, float negLr) {
    /** The step after {@code stepsTaken} earlier ones, at learning rate {@code lr}. */
    public static SgdScalars of(SgdConfig config, double lr, long stepsTaken) {
        return new SgdScalars((float) config.weightDecay(), config.weightDecay() != 0, (float) config.momentum(), config.momentum() != 0,
                (float) (1 - config.dampening()), stepsTaken == 0, config.nesterov(), (float) -lr);
    }
}
