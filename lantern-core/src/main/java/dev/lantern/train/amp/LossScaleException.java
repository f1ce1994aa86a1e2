package dev.lantern.train.amp;

import dev.lantern.ir.LanternException;

/**
 * The dynamic loss scaler's recovery policy gave up: K steps in a row overflowed, so lowering the
 * scale does not help and the run is diverging (or a gradient is broken). The report names the
 * tensors that overflowed first and holds the scale history.
 */
public final class LossScaleException extends LanternException {
    private final transient OverflowReport report;

    /** An error carrying {@code report}; the message is its summary. */
    public LossScaleException(OverflowReport report) {
        super("loss scaler: " + report.summary());
        this.report = report;
    }

    /** Which tensors overflowed first, and the scale history. */
    public OverflowReport report() {
        return report;
    }
}
