package dev.lantern.checkpoint;

import dev.lantern.ir.LanternException;

/**
 * A checkpoint folder that cannot give what was asked: no committed checkpoint, every committed
 * one corrupt, a write that cannot proceed. One line; {@link #kind()} says which, so that a caller
 * (a resuming trainer: start fresh on {@link Kind#NONE_COMMITTED}, stop on the others) need not
 * match on text. A path a manifest names outside its folder is a
 * {@link dev.lantern.weights.UnsafePathException} instead.
 */
public final class CheckpointException extends LanternException {
    public enum Kind {
        /** The folder holds no committed checkpoint (a fresh run, or every write was torn). */
        NONE_COMMITTED,
        /** Checkpoints were committed, but none verifies: each is named with its fault. */
        ALL_CORRUPT,
        /** A step not after the last committed one, a tensor name or metadata that cannot be stored. */
        BAD_REQUEST,
        /** Another process writes to the folder (its lock is held). */
        LOCKED,
        /** The file system refused a read or a write. */
        IO
    }

    private final Kind kind;

    public CheckpointException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    public CheckpointException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
