package dev.lantern.runtime.soak;

/**
 * A decoder-only transformer training step, planned per step with a random batch and sequence
 * length (so activation sizes change from step to step, as with variable-length batches):
 * weights and weight gradients persist; per layer the forward keeps its activations, the
 * attention scores are a temporary, and the backward frees them in reverse order while its own
 * gradient temporaries come and go.
 *
 * <pre>
 * model: layers 6, hidden 2048, heads 16, mlp 8192, vocab 8192, bf16
 * step:  batch in {1,2,4}, seq in {128,256,384,512,768,1024}; tokens T = batch * seq
 * per layer: ln1 (T,h) stats (T,2)f32 qkv (T,3h) scores,probs (b,heads,s,s) attn,proj,ln2 (T,h)
 *            up,gelu (T,4h) down (T,h)
 * </pre>
 */
final class TrainingAgent implements Agent {
    private static final int LAYERS = 6, HIDDEN = 2048, HEADS = 16, MLP = 4 * HIDDEN, VOCAB = 8192, BYTES = 2;
    private static final int[] BATCHES = {1, 2, 4};
    private static final int[] SEQS = {128, 256, 384, 512, 768, 1024};
    private static final int PER_LAYER = 16, HEAD = LAYERS * PER_LAYER, WEIGHTS = HEAD + 8;

    private final Script script;
    private boolean weightsPlanned;

    TrainingAgent(long stream) {
        this.script = new Script(stream);
    }

    @Override
    public void step(Traffic t) {
        if (script.isEmpty()) {
            plan(t);
        }
        script.step(t);
    }

    @Override
    public void releaseAll(Traffic t) {
        script.releaseAll(t);
    }

    private static int s(int layer, int k) {
        return layer * PER_LAYER + k;
    }

    private void plan(Traffic t) {
        if (!weightsPlanned) {
            // Weights and their gradients: qkv (h,3h), out (h,h), up (h,4h), down (4h,h) per layer.
            long[] shapes = {3L * HIDDEN * HIDDEN, (long) HIDDEN * HIDDEN, (long) HIDDEN * MLP, (long) MLP * HIDDEN};
            int w = WEIGHTS;
            for (int l = 0; l < LAYERS; l++) {
                for (long elems : shapes) {
                    script.alloc(w++, elems * BYTES);
                    script.alloc(w++, elems * BYTES);
                }
            }
            weightsPlanned = true;
        }
        long b = BATCHES[t.rng.nextInt(BATCHES.length)];
        long seq = SEQS[t.rng.nextInt(SEQS.length)];
        long tokens = b * seq;
        long act = tokens * HIDDEN * BYTES;
        long wide = tokens * MLP * BYTES;
        long scores = b * HEADS * seq * seq * BYTES;
        // Forward.
        for (int l = 0; l < LAYERS; l++) {
            script.alloc(s(l, 0), act);                // ln1
            script.alloc(s(l, 1), tokens * 8);         // mean, rstd (f32)
            script.alloc(s(l, 2), 3 * act);            // qkv
            script.alloc(s(l, 3), scores);             // q k^T, scaled and masked
            script.alloc(s(l, 4), scores);             // softmax
            script.free(s(l, 3));
            script.alloc(s(l, 5), act);                // probs v
            script.alloc(s(l, 6), act);                // out proj + residual
            script.alloc(s(l, 7), act);                // ln2
            script.alloc(s(l, 8), wide);               // up
            script.alloc(s(l, 9), wide);               // gelu
            script.alloc(s(l, 10), act);               // down + residual
        }
        script.alloc(HEAD, tokens * VOCAB * BYTES);     // logits
        script.alloc(HEAD + 1, tokens * VOCAB * BYTES); // d logits
        script.free(HEAD);
        script.alloc(HEAD + 2, act);                    // d hidden
        script.free(HEAD + 1);
        // Backward, last layer first: each freed activation is the one its gradient consumed.
        int grad = HEAD + 2;
        for (int l = LAYERS - 1; l >= 0; l--) {
            script.alloc(s(l, 11), wide);              // d gelu
            script.free(s(l, 10));
            script.free(s(l, 9));
            script.alloc(s(l, 12), wide);              // d up
            script.free(s(l, 11));
            script.free(s(l, 8));
            script.alloc(s(l, 13), act);               // d ln2 input
            script.free(s(l, 12));
            script.free(s(l, 7));
            script.free(s(l, 6));
            script.alloc(s(l, 14), scores);            // d probs
            script.free(s(l, 5));
            script.free(s(l, 4));
            script.alloc(s(l, 15), 3 * act);           // d qkv
            script.free(s(l, 14));
            script.free(s(l, 2));
            int next = grad == HEAD + 2 ? HEAD + 3 : HEAD + 2;
            script.alloc(next, act);                   // d layer input
            script.free(grad);
            script.free(s(l, 15));
            script.free(s(l, 13));
            script.free(s(l, 1));
            script.free(s(l, 0));
            grad = next;
        }
        script.free(grad);
    }
}
