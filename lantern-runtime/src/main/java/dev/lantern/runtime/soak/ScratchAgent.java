package dev.lantern.runtime.soak;

import dev.lantern.runtime.alloc.Allocation;
import java.util.ArrayList;
import java.util.List;

/**
 * Small scratch buffers (256 B .. 512 KiB, log-uniform): reduction workspaces, norm
 * statistics, index lists. Holds around 64 at a time and frees them in random order.
 */
final class ScratchAgent implements Agent {
    private final long stream;
    private final List<Allocation> held = new ArrayList<>();

    ScratchAgent(long stream) {
        this.stream = stream;
    }

    @Override
    public void step(Traffic t) {
        boolean alloc = held.isEmpty() || (held.size() < 128 && t.rng.nextInt(128) >= held.size());
        if (alloc) {
            long bytes = (long) Math.exp(t.rng.nextDouble(Math.log(256), Math.log(512 * 1024)));
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
