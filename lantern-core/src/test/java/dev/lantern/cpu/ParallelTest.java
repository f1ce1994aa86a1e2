package dev.lantern.cpu;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The persistent pool: every task runs exactly once, failures reach the caller, concurrent callers both finish. */
class ParallelTest {
    @Test
    void everyTaskRunsOnceOverManyCalls() {
        for (int call = 0; call < 2000; call++) {
            int tasks = 1 + call % 37;
            AtomicIntegerArray hits = new AtomicIntegerArray(tasks);
            Parallel.forEach(tasks, hits::incrementAndGet);
            for (int i = 0; i < tasks; i++) {
                assertEquals(1, hits.get(i), "call " + call + " task " + i);
            }
        }
    }

    @Test
    void aFailingTaskReachesTheCallerAndThePoolStaysUsable() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> Parallel.forEach(64, i -> {
            if (i == 40) {
                throw new IllegalStateException("task 40");
            }
        }));
        assertEquals("task 40", e.getMessage());
        AtomicLong sum = new AtomicLong();
        Parallel.forEach(100, sum::addAndGet);
        assertEquals(4950, sum.get());
    }

    @Test
    void concurrentCallersAndNestedCallsFinish() throws Exception {
        AtomicLong total = new AtomicLong();
        Runnable r = () -> {
            for (int c = 0; c < 300; c++) {
                Parallel.forEach(8, i -> Parallel.forEach(3, j -> total.incrementAndGet()));
            }
        };
        Thread t = new Thread(r);
        t.start();
        r.run();
        t.join();
        assertEquals(2L * 300 * 8 * 3, total.get());
    }
}
