package dev.lantern;

import dev.lantern.ir.LanternException;

/** A parameter with no value, or a value of another shape or dtype than the graph declares. */
public final class WeightsException extends LanternException {
    public WeightsException(String message) {
        super(message);
    }
}
