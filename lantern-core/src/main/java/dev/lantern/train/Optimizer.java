package dev.lantern.train;

import java.util.List;

/**
 * An optimizer over a fixed list of named parameters, stepping all of them in one multi-tensor
 * pass ({@link MultiTensor}). Its state (moments, momentum buffers, the step count, the learning
 * rate) goes out and comes back as a {@link NamedState} so that a checkpoint restores it
 * bit-exactly.
 */
public sealed interface Optimizer permits Sgd, AdamW {
    /** The parameters, in the order the optimizer was given them. */
    default List<Parameter> params() {
        return plan().params();
    }

    /** The chunked pass over the parameters that the step runs, for the scaler and the clip to share. */
    MultiTensor plan();

    /** Steps taken so far. */
    long steps();

    /** The current learning rate. */
    double lr();

    /** Sets the learning rate for the next steps (a schedule calls this before each step). */
    void setLr(double lr);

    /**
     * Updates every parameter's master from its gradient and, under mixed precision, rewrites
     * its low copy. The gradients must already be unscaled and clipped.
     */
    void step();

    /** Sets every gradient to zero. */
    default void zeroGrad() {
        for (Parameter p : params()) {
            p.zeroGrad();
        }
    }

    /**
     * The state: tensors named {@code KIND.PARAM} (views of the live buffers, so write them out
     * before the next step) and metadata {@code optimizer}, {@code step}, {@code lr} and the
     * hyperparameters.
     */
    NamedState state();

    /**
     * Restores a state that {@link #state()} of the same kind of optimizer over parameters of the
     * same names and shapes produced: copies the tensors into the live buffers and takes the step
     * count and learning rate. Other hyperparameters stay as configured.
     */
    void loadState(NamedState state);
}
