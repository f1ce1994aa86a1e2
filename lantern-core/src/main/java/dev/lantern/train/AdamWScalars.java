package dev.lantern.train;

/**
 * The f32 scalars of one AdamW step, computed from the step count and learning rate in double, as
 * both the CPU's {@link AdamW#step} and the device optimizer's kernel take them, so that the two
 * compute the same bits:
 *
 * @param decay       {@code f32(1 - lr·weight_decay)}
 * @param doDecay     whether weight decay is on
 * @param w1          {@code f32(1 - beta1)} when {@code small}, else that minus 1 (PyTorch's lerp branches)
 * @param small       whether {@code |f32(1 - beta1)| < 0.5}
 * @param w2          {@code f32(1 - beta2)}
 * @param b2          {@code f32(beta2)}
 * @param bc2Sqrt     {@code f32(sqrt(1 - beta2^t))}
 * @param eps         {@code f32(eps)}
 * @param negStepSize {@code f32(-lr / (1 - beta1^t))}
 */
public record AdamWScalars(float decay, boolean doDecay, float w1, boolean small, float w2, float b2, float bc2Sqrt, float eps,
                           float negStepSize) {
    /** Step {@code t} (from 1) at learning rate {@code lr}. */
    public static AdamWScalars of(AdamWConfig config, double lr, long t) {
        double bc1 = 1 - Math.pow(config.beta1(), t);
        double bc2 = 1 - Math.pow(config.beta2(), t);
        float w1 = (float) (1 - config.beta1());
        boolean small = Math.abs(w1) < 0.5f;
        return new AdamWScalars((float) (1 - lr * config.weightDecay()), config.weightDecay() != 0, small ? w1 : w1 - 1f, small,
                (float) (1 - config.beta2()), (float) config.beta2(), (float) Math.sqrt(bc2), (float) config.eps(), (float) -(lr / bc1));
    }
}
