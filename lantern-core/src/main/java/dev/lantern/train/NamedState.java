package dev.lantern.train;

import dev.lantern.tensor.Tensor;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Training state as a checkpoint stores it: named tensors (optimizer moments, momentum buffers)
 * and a small string map for the scalars (step, scale, counters, generator state). Scalars are
 * written in Java's shortest round-trip form ({@code Long.toString}, {@code Float.toString},
 * {@code Double.toString}), which parses back to the same bits, so the round trip is exact and
 * the metadata stays readable. Tensor order is insertion order; metadata is sorted.
 *
 * @param tensors the state tensors by name, in insertion order
 * @param metadata the scalars by key
 */
public record NamedState(Map<String, Tensor> tensors, Map<String, String> metadata) {
    /** Copies both maps into unmodifiable ones. */
    public NamedState {
        tensors = Collections.unmodifiableMap(new LinkedHashMap<>(tensors));
        metadata = Collections.unmodifiableMap(new TreeMap<>(metadata));
    }

    /** A state with no tensors and no metadata. */
    public static NamedState empty() {
        return new NamedState(Map.of(), Map.of());
    }

    /** This state with every tensor name and metadata key prefixed by {@code prefix}. */
    public NamedState prefixed(String prefix) {
        Map<String, Tensor> t = new LinkedHashMap<>();
        tensors.forEach((k, v) -> t.put(prefix + k, v));
        Map<String, String> m = new TreeMap<>();
        metadata.forEach((k, v) -> m.put(prefix + k, v));
        return new NamedState(t, m);
    }

    /** The part of this state under {@code prefix}, with the prefix taken off. */
    public NamedState under(String prefix) {
        Map<String, Tensor> t = new LinkedHashMap<>();
        tensors.forEach((k, v) -> {
            if (k.startsWith(prefix)) {
                t.put(k.substring(prefix.length()), v);
            }
        });
        Map<String, String> m = new TreeMap<>();
        metadata.forEach((k, v) -> {
            if (k.startsWith(prefix)) {
                m.put(k.substring(prefix.length()), v);
            }
        });
        return new NamedState(t, m);
    }

    /** This state and {@code other} together; a name in both is an error. */
    public NamedState with(NamedState other) {
        Map<String, Tensor> t = new LinkedHashMap<>(tensors);
        other.tensors.forEach((k, v) -> {
            if (t.putIfAbsent(k, v) != null) {
                throw new TrainStateException("state tensor " + k + " given twice");
            }
        });
        Map<String, String> m = new TreeMap<>(metadata);
        other.metadata.forEach((k, v) -> {
            if (m.putIfAbsent(k, v) != null) {
                throw new TrainStateException("state key " + k + " given twice");
            }
        });
        return new NamedState(t, m);
    }

    /** The tensor {@code name}; a {@link TrainStateException} if it is missing. */
    public Tensor tensor(String name) {
        Tensor t = tensors.get(name);
        if (t == null) {
            throw new TrainStateException("state tensor " + name + " is missing");
        }
        return t;
    }

    /** The metadata value {@code key}; a {@link TrainStateException} if it is missing. */
    public String string(String key) {
        String v = metadata.get(key);
        if (v == null) {
            throw new TrainStateException("state key " + key + " is missing");
        }
        return v;
    }

    /** The metadata value {@code key} as a long. */
    public long longValue(String key) {
        try {
            return Long.parseLong(string(key));
        } catch (NumberFormatException e) {
            throw new TrainStateException("state key " + key + " is not an integer: " + metadata.get(key));
        }
    }

    /** The metadata value {@code key} as a float, bit-exact for what {@link Float#toString} wrote. */
    public float floatValue(String key) {
        try {
            return Float.parseFloat(string(key));
        } catch (NumberFormatException e) {
            throw new TrainStateException("state key " + key + " is not a number: " + metadata.get(key));
        }
    }

    /** The metadata value {@code key} as a double, bit-exact for what {@link Double#toString} wrote. */
    public double doubleValue(String key) {
        try {
            return Double.parseDouble(string(key));
        } catch (NumberFormatException e) {
            throw new TrainStateException("state key " + key + " is not a number: " + metadata.get(key));
        }
    }

    /**
     * Checks that the saved tensor {@code name} exists with {@code like}'s dtype and shape, so that
     * a load can check everything before it overwrites anything.
     */
    public void checkTensor(String name, Tensor like) {
        Tensor t = tensor(name);
        if (t.dtype() != like.dtype() || !t.shape().equals(like.shape())) {
            throw new TrainStateException("state tensor " + name + " is " + t.type() + ", expected " + like.type());
        }
    }

    /**
     * Copies the saved tensor {@code name} into {@code into}, which must have its dtype and shape:
     * how a load writes a checkpoint's bytes into live buffers.
     */
    public void copyInto(String name, Tensor into) {
        checkTensor(name, into);
        Tensor t = tensor(name);
        long bytes = into.numel() * into.dtype().bytes();
        into.segment().asSlice(0, bytes).copyFrom(t.segment().asSlice(0, bytes));
    }
}
