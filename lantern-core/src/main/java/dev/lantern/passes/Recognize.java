package dev.lantern.passes;

import dev.lantern.ir.Graph;

import java.util.List;

/**
 * The recognition passes that the ONNX importer runs on the graph it built, in order. Most read
 * constants' values, which the importer still holds (the pipeline's passes see params without
 * values). First the flattened linear layers become matmuls on the activation, so that the GELU
 * and residual after them are their direct readers; then GELU's tanh form and rotary embeddings
 * (independent of each other); then the softmax's scale and causal mask, after which
 * fuse-attention matches the attention (and takes the rope ops on q and k into it).
 */
public final class Recognize {
    private Recognize() {}

    /** The recognition passes with {@code values}, in the order they run. */
    public static List<Pass> passes(ConstantValues values) {
        return List.of(new RecognizeFlatLinear(), new RecognizeGelu(values), new RecognizeRope(values), new RecognizeMaskedSoftmax(values));
    }

    /** {@code g} with every recognised pattern replaced by its op. */
    public static Graph run(Graph g, ConstantValues values) {
        for (Pass p : passes(values)) {
            g = p.run(g);
        }
        return g;
    }
}
