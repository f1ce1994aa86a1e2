package dev.lantern.cuda.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class EventTimingTest {
    @Test
    void medianIsTheMiddleOrTheUpperOfTheTwoAndLeavesItsInputAlone() {
        double[] odd = {3.0, 1.0, 2.0};
        assertEquals(2.0, EventTiming.median(odd));
        assertArrayEquals(new double[] {3.0, 1.0, 2.0}, odd, "not sorted in place");
        assertEquals(7.0, EventTiming.median(new double[] {9.0, 1.0, 7.0, 5.0}));
        assertEquals(4.5, EventTiming.median(new double[] {4.5}));
    }
}
