package dev.lantern.checkpoint;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * What one checkpoint holds: the step, named tensors (weights, optimizer moments, ... in any
 * dtype) and small metadata as strings (RNG state, loss-scaler state, the data position; JSON
 * where it has structure). Names are kept sorted, so the same checkpoint writes the same bytes.
 *
 * @param step     the training step the state is after (≥ 0)
 * @param tensors  by name; a name is any non-empty string without NUL ({@code __metadata__} excepted)
 * @param metadata by key, free text
 */
public record Checkpoint(long step, Map<String, StoredTensor> tensors, Map<String, String> metadata) {
    public Checkpoint {
        if (step < 0) {
            throw new CheckpointException(CheckpointException.Kind.BAD_REQUEST, "checkpoint step must be >= 0, found " + step);
        }
        tensors = Collections.unmodifiableMap(new TreeMap<>(tensors));
        metadata = Collections.unmodifiableMap(new TreeMap<>(metadata));
        for (String n : tensors.keySet()) {
            if (n.isEmpty() || n.indexOf('\0') >= 0 || n.equals("__metadata__")) {
                throw new CheckpointException(CheckpointException.Kind.BAD_REQUEST, "checkpoint tensor name '" + n
                        + "' cannot be stored (empty, NUL or __metadata__)");
            }
        }
    }

    /** Same step, metadata and tensors, byte for byte. */
    public boolean sameAs(Checkpoint o) {
        if (step != o.step || !metadata.equals(o.metadata) || !tensors.keySet().equals(o.tensors.keySet())) {
            return false;
        }
        return tensors.entrySet().stream().allMatch(e -> e.getValue().sameAs(o.tensors.get(e.getKey())));
    }
}
