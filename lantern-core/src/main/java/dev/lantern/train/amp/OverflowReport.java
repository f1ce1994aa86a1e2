package dev.lantern.train.amp;

import java.util.List;

/**
 * Why the recovery policy gave up: {@code consecutive} overflowing steps in a row, the first of
 * them at update {@code firstStep} with non-finite gradients in {@code firstTensors} (where the
 * trouble started), the scale now, and the scale history (the most recent events).
 *
 * @param consecutive overflowing steps in a row, K when the policy fires
 * @param firstStep the scaler update (1-based) of the streak's first overflow
 * @param firstTensors the parameters whose gradients were non-finite at that update, in order
 * @param lastTensors the same at the latest update
 * @param scale the scale after the latest backoff
 * @param history the scale history, oldest first
 */
public record OverflowReport(int consecutive, long firstStep, List<String> firstTensors, List<String> lastTensors,
                             float scale, List<ScaleEvent> history) {
    /** Copies the lists. */
    public OverflowReport {
        firstTensors = List.copyOf(firstTensors);
        lastTensors = List.copyOf(lastTensors);
        history = List.copyOf(history);
    }

    /** One line for the CLI. */
    public String summary() {
        return consecutive + " overflowing steps in a row since update " + firstStep + " (first non-finite gradients: "
                + String.join(", ", firstTensors) + "); scale now " + scale;
    }
}
