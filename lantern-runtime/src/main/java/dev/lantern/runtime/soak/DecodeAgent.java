package dev.lantern.runtime.soak;

/**
 * Autoregressive inference with a KV cache, the classic growing-block pattern: up to 8
 * requests in flight; each holds a K and a V block per layer whose capacity grows in chunks of
 * 256 tokens by allocate-bigger-then-free-old (as {@code torch.cat} does), while each decoded
 * token allocates and frees small activations. A finished request frees its cache; a new one
 * arrives with a prefill of random length.
 *
 * <pre>
 * model: layers 6, hidden 2048, heads 16, bf16;  K or V block: (capacity, hidden)
 * prompt 16..1024 tokens, generation 1..1024 tokens
 * </pre>
 */
final class DecodeAgent implements Agent {
    private static final int LAYERS = 6, HIDDEN = 2048, HEADS = 16, BYTES = 2, CHUNK = 256, REQUESTS = 8;
    // Slots: request r, layer l, K or V -> r * 64 + l * 2 + kv; per-token scratch from 1000 up.
    private static final int SCRATCH = 1000;

    private final Script script;
    private final int[] length = new int[REQUESTS];
    private final int[] capacity = new int[REQUESTS];
    private final int[] target = new int[REQUESTS];

    DecodeAgent(long stream) {
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

    private void plan(Traffic t) {
        int r = t.rng.nextInt(REQUESTS);
        if (capacity[r] == 0) {
            // A new request: prefill allocates the cache at the prompt's size, plus big temporaries.
            int prompt = t.rng.nextInt(16, 1025);
            length[r] = prompt;
            target[r] = prompt + t.rng.nextInt(1, 1025);
            capacity[r] = Math.ceilDiv(prompt, CHUNK) * CHUNK;
            for (int l = 0; l < LAYERS; l++) {
                script.alloc(SCRATCH, (long) prompt * 3 * HIDDEN * BYTES);      // qkv of the prompt
                script.alloc(r * 64 + l * 2, (long) capacity[r] * HIDDEN * BYTES);
                script.alloc(r * 64 + l * 2 + 1, (long) capacity[r] * HIDDEN * BYTES);
                script.alloc(SCRATCH + 1, (long) HEADS * prompt * prompt * BYTES); // prompt scores
                script.free(SCRATCH + 1);
                script.free(SCRATCH);
            }
            return;
        }
        if (length[r] >= target[r]) {
            for (int l = 0; l < LAYERS; l++) {
                script.free(r * 64 + l * 2);
                script.free(r * 64 + l * 2 + 1);
            }
            capacity[r] = 0;
            return;
        }
        // One decode token: grow the cache when full, then per layer small activations.
        boolean grow = length[r] == capacity[r];
        if (grow) {
            capacity[r] += CHUNK;
        }
        for (int l = 0; l < LAYERS; l++) {
            if (grow) {
                script.grow(r * 64 + l * 2, (long) capacity[r] * HIDDEN * BYTES);
                script.grow(r * 64 + l * 2 + 1, (long) capacity[r] * HIDDEN * BYTES);
            }
            script.alloc(SCRATCH + 2, 3L * HIDDEN * BYTES);                        // qkv of one token
            script.alloc(SCRATCH + 3, (long) HEADS * (length[r] + 1) * 4);         // scores, f32
            script.free(SCRATCH + 3);
            script.free(SCRATCH + 2);
        }
        length[r]++;
    }
}
