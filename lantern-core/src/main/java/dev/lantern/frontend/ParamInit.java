package dev.lantern.frontend;

import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;

/**
 * How a parameter is initialised: a seeded, counter-based draw, so that the same seed gives the
 * same weights on every machine and thread count. {@code normal(std)}, or {@code around(mean, std)}
 * for norm weights (near one, but never exactly one, so that a dropped weight is caught by tests).
 */
public record ParamInit(float mean, float std) {
    public static ParamInit normal(float std) {
        return new ParamInit(0f, std);
    }

    public static ParamInit around(float mean, float std) {
        return new ParamInit(mean, std);
    }

    public Tensor fill(Tensor t, long seed, String name) {
        long key = Philox.key(seed, name);
        for (long i = 0; i < t.numel(); i++) {
            t.set(i, mean + std * Philox.normal(key, i));
        }
        return t;
    }
}
