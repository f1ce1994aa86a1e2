package dev.lantern;

import dev.lantern.ir.LanternException;

/** A session asked for a device that is not here (no GPU, no driver, a missing library, no backend). */
public final class DeviceUnavailableException extends LanternException {
    public DeviceUnavailableException(String message) {
        super(message);
    }
}
