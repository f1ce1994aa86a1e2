package dev.lantern.trace;

import dev.lantern.ir.LanternException;

/** A trace that could not be written (its folder missing or read-only, the disk full). One line, for the CLI. */
public final class TraceException extends LanternException {
    public TraceException(String message, Throwable cause) {
        super(message, cause);
    }
}
