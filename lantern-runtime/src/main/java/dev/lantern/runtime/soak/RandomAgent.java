package dev.lantern.runtime.soak;

import dev.lantern.runtime.alloc.Allocation;
import java.util.ArrayList;
import java.util.List;

/**
 * Unstructured traffic: sizes log-uniform over 512 B .. 64 MiB, lifetimes random, at most 32
 * blocks held. The adversarial part of the mix: nothing about it is stack-like.
 */
final class RandomAgent implements Agent {
    private final long stream;
    private final List<Allocation> held = new ArrayList<>();

    RandomAgent(long stream) {
        this.stream = stream;
    }

    @Override
    public void step(Traffic t) {
        boolean alloc = held.isEmpty() || (held.size() < 32 && t.rng.nextBoolean());
        if (alloc) {
            long bytes = (long) Math.exp(t.rng.nextDouble(Math.log(512), Math.log(64L << 20)));
            Allocation a = t.alloc(bytes, stream);
            if (a != null) {
                held.add(a);
            }
        } else {
            t.freeRandom(held);
        }
    }

    @Override
    public void releaseAll(Traffic t) {
        held.forEach(t::freeQuietly);
        held.clear();
    }
}
