package dev.lantern.train;

import dev.lantern.ir.LanternException;

/**
 * A parameter, gradient or saved training state that does not fit what it is used with: a
 * gradient of another shape than its parameter, a checkpoint that lacks a state tensor or holds
 * one of another shape, metadata that does not parse.
 */
public final class TrainStateException extends LanternException {
    /** An error with a one-line message naming the tensor or key at fault. */
    public TrainStateException(String message) {
        super(message);
    }
}
