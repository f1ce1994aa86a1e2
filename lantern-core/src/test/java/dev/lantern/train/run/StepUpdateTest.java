package dev.lantern.train.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.train.AdamWConfig;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link StepUpdate#decide}: the host's clip and skip, which a device deciding on its own must match. */
class StepUpdateTest {
    private static final StepUpdate.Rule ADAMW = new StepUpdate.AdamWRule(new AdamWConfig(1e-3, 0.9, 0.999, 1e-8, 0.01), 1e-3, 1);

    @Test
    void clipsWhenTheNormIsAboveTheLimit() {
        StepUpdate.Decision d = new StepUpdate(ADAMW, 1f, false).decide(new DeviceStep.Measured(2.0, 16.0, List.of()));
        assertTrue(d.applied());
        assertEquals(4f, d.norm());
        assertTrue(d.clip());
        assertEquals(1f / (4f + 1e-6f), d.coef());
    }

    @Test
    void leavesANormBelowTheLimitAndHasNoClipWithoutALimit() {
        StepUpdate.Decision below = new StepUpdate(ADAMW, 1f, false).decide(new DeviceStep.Measured(2.0, 0.25, List.of()));
        assertFalse(below.clip());
        assertEquals(0.5f, below.norm());
        StepUpdate.Decision none = new StepUpdate(ADAMW, 0f, false).decide(new DeviceStep.Measured(2.0, 1e6, List.of()));
        assertFalse(none.clip());
        assertEquals(1f, none.coef());
    }

    @Test
    void skipsANonFiniteGradientOnlyUnderAScaler() {
        DeviceStep.Measured inf = new DeviceStep.Measured(2.0, Double.POSITIVE_INFINITY, List.of(3));
        assertFalse(new StepUpdate(ADAMW, 1f, true).decide(inf).applied());
        StepUpdate.Decision plain = new StepUpdate(ADAMW, 1f, false).decide(inf);
        assertTrue(plain.applied()); // without a scaler the NaN reaches the weights, as on the CPU
        assertTrue(Float.isNaN(plain.norm()));
        assertTrue(plain.clip());
        assertTrue(Float.isNaN(plain.coef()));
    }

    @Test
    void refusesANegativeOrNaNClip() {
        assertThrows(IllegalArgumentException.class, () -> new StepUpdate(ADAMW, -1f, false));
        assertThrows(IllegalArgumentException.class, () -> new StepUpdate(ADAMW, Float.NaN, false));
        assertThrows(IllegalArgumentException.class, () -> new StepUpdate(null, 1f, false));
    }
}
