package dev.lantern.autodiff;

import dev.lantern.ir.Graph;

import java.util.Map;

/**
 * What {@link Gradients#of} returns: a graph whose outputs are the loss, then one gradient per
 * differentiated value in the order asked; {@code loss} names the loss output and
 * {@code gradients} maps each differentiated value (its SSA name in the forward graph) to the
 * output that holds its gradient, of the same shape and dtype. Executors return outputs keyed by
 * these output names.
 */
public record BackwardGraph(Graph graph, String loss, Map<String, String> gradients) {
    public BackwardGraph {
        gradients = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(gradients));
    }

    /** The output holding the gradient of {@code value}; a {@link GradientException} when it was not asked for. */
    public String gradientOf(String value) {
        String g = gradients.get(value);
        if (g == null) {
            throw new GradientException("no gradient of %" + value + " was asked for (asked: " + gradients.keySet() + ")");
        }
        return g;
    }
}
