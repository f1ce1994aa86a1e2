package dev.lantern.passes;

import dev.lantern.ir.Graph;

import java.util.List;

/**
 * The recognition passes that need constant tables, in order, for an importer that holds the
 * tables' values (the pipeline's passes see a graph without them). Rotary embeddings first, so
 * that the masked-softmax rules see q and k as rope ops; then the softmax's scale and causal mask,
 * after which fuse-attention matches the attention.
 */
public final class Recognize {
    private Recognize() {}

    /** The recognition passes with {@code values}, in the order they run. */
    public static List<Pass> passes(ConstantValues values) {
        return List.of(new RecognizeRope(values), new RecognizeMaskedSoftmax(values));
    }

    /** {@code g} with every recognised pattern replaced by its op. */
    public static Graph run(Graph g, ConstantValues values) {
        for (Pass p : passes(values)) {
            g = p.run(g);
        }
        return g;
    }
}
