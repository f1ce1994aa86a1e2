package dev.lantern.passes;

import dev.lantern.ir.Graph;

import java.util.List;

/**
 * The recognition passes that read constants, in order, for an importer that holds their values
 * (the pipeline's passes see params without values). GELU's tanh form and rotary embeddings
 * first (independent of each other), then the softmax's scale and causal mask, after which
 * fuse-attention matches the attention (and takes the rope ops on q and k into it).
 */
public final class Recognize {
    private Recognize() {}

    /** The recognition passes with {@code values}, in the order they run. */
    public static List<Pass> passes(ConstantValues values) {
        return List.of(new RecognizeGelu(values), new RecognizeRope(values), new RecognizeMaskedSoftmax(values));
    }

    /** {@code g} with every recognised pattern replaced by its op. */
    public static Graph run(Graph g, ConstantValues values) {
        for (Pass p : passes(values)) {
            g = p.run(g);
        }
        return g;
    }
}
