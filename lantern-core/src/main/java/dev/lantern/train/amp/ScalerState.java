package dev.lantern.train.amp;

import dev.lantern.train.NamedState;
import dev.lantern.train.TrainStateException;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A snapshot of everything the dynamic loss scaler carries from one step to the next, so that a
 * resumed run scales, grows, backs off and gives up exactly where the saved one would have.
 *
 * @param scale the current scale
 * @param growthTracker clean steps in a row since the last growth or overflow
 * @param steps updates so far
 * @param overflows overflowing updates so far
 * @param skippedSteps optimizer steps skipped so far (one per overflow)
 * @param consecutiveOverflows overflowing updates in a row, up to now
 * @param streakFirstStep the update of the current streak's first overflow (0 with no streak)
 * @param streakFirstTensors the tensors that overflowed at that update
 * @param history the scale history, oldest first
 */
public record ScalerState(float scale, int growthTracker, long steps, long overflows, long skippedSteps,
                          int consecutiveOverflows, long streakFirstStep, List<String> streakFirstTensors,
                          List<ScaleEvent> history) {
    /** Checks the ranges (a checkpoint is outside input) and copies the lists. */
    public ScalerState {
        if (!(scale > 0) || !Float.isFinite(scale)) {
            throw new IllegalArgumentException("scale must be positive and finite, got " + scale);
        }
        if (growthTracker < 0 || steps < 0 || overflows < 0 || skippedSteps < 0 || consecutiveOverflows < 0
                || streakFirstStep < 0 || overflows > steps || consecutiveOverflows > overflows) {
            throw new IllegalArgumentException("inconsistent counters: steps " + steps + ", overflows " + overflows
                    + ", skipped " + skippedSteps + ", in a row " + consecutiveOverflows + ", growth tracker " + growthTracker);
        }
        streakFirstTensors = List.copyOf(streakFirstTensors);
        history = List.copyOf(history);
    }

    /** The state as metadata only (no tensors), values in bit-exact text. */
    public NamedState toNamedState() {
        Map<String, String> m = new HashMap<>();
        m.put("scale", Float.toString(scale));
        m.put("growth_tracker", Integer.toString(growthTracker));
        m.put("steps", Long.toString(steps));
        m.put("overflows", Long.toString(overflows));
        m.put("skipped_steps", Long.toString(skippedSteps));
        m.put("consecutive_overflows", Integer.toString(consecutiveOverflows));
        m.put("streak_first_step", Long.toString(streakFirstStep));
        // NOTE: tensor names are joined with '\n', which no parameter name from a graph contains
        m.put("streak_first_tensors", String.join("\n", streakFirstTensors));
        List<String> h = new ArrayList<>();
        for (ScaleEvent e : history) {
            h.add(e.toString());
        }
        m.put("history", String.join(",", h));
        return new NamedState(Map.of(), m);
    }

    /** Reads what {@link #toNamedState()} wrote. */
    public static ScalerState fromNamedState(NamedState s) {
        try {
            String tensors = s.string("streak_first_tensors");
            String hist = s.string("history");
            List<ScaleEvent> history = new ArrayList<>();
            if (!hist.isEmpty()) {
                for (String e : hist.split(",", -1)) {
                    history.add(ScaleEvent.parse(e));
                }
            }
            return new ScalerState(s.floatValue("scale"), Math.toIntExact(s.longValue("growth_tracker")), s.longValue("steps"),
                    s.longValue("overflows"), s.longValue("skipped_steps"),
                    Math.toIntExact(s.longValue("consecutive_overflows")), s.longValue("streak_first_step"),
                    tensors.isEmpty() ? List.of() : List.of(tensors.split("\n", -1)), history);
        } catch (IllegalArgumentException | ArithmeticException e) {
            throw new TrainStateException("loss scaler state does not parse: " + e.getMessage());
        }
    }
}
