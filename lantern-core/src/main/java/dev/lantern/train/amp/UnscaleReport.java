package dev.lantern.train.amp;

import java.util.List;

/**
 * What the fused unscale pass found: the parameters whose gradients held a non-finite value
 * (after unscaling), in parameter order, and the factor the gradients were multiplied by.
 *
 * @param nonFinite names of the parameters with an inf or NaN in their gradient, in order
 * @param invScale the f32 factor applied, {@code f32(1 / (double) scale)} as GradScaler computes it
 */
public record UnscaleReport(List<String> nonFinite, float invScale) {
    /** Copies the list. */
    public UnscaleReport {
        nonFinite = List.copyOf(nonFinite);
    }

    /** Whether every gradient was finite, so that the optimizer may step. */
    public boolean finite() {
        return nonFinite.isEmpty();
    }
}
