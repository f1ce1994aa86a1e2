package dev.lantern.runtime.sched;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.runtime.cpu.CpuDevice;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class StreamSchedulerTest {
    @Test
    void independentBranchesLandOnDifferentStreamsWithJoins() {
        TaskGraph g = new TaskGraph();
        int a = g.kernel("a", 10, Task.Work.NONE);
        int b = g.kernel("b", 10, Task.Work.NONE, a);
        int c = g.kernel("c", 10, Task.Work.NONE, a);
        int d = g.kernel("d", 10, Task.Work.NONE, b, c);
        Schedule s = StreamScheduler.plan(g, 2);
        assertNotEquals(s.streamOf(b), s.streamOf(c));
        assertEquals(s.streamOf(a), s.streamOf(b)); // the chain continues where its producer ran
        assertTrue(s.joins().contains(new Schedule.Join(a, s.streamOf(a), c, s.streamOf(c))), s.joins().toString());
        int other = s.streamOf(d) == s.streamOf(b) ? c : b;
        assertTrue(s.joins().contains(new Schedule.Join(other, s.streamOf(other), d, s.streamOf(d))), s.joins().toString());
        assertEquals(2, s.joins().size());
        assertEquals(30, s.estMakespan(), 1e-12); // a, then b || c, then d
    }

    @Test
    void chainStaysOnOneStreamWithoutJoins() {
        TaskGraph g = new TaskGraph();
        int prev = g.kernel("k0", 5, Task.Work.NONE);
        for (int i = 1; i < 6; i++) {
            prev = g.kernel("k" + i, 5, Task.Work.NONE, prev);
        }
        Schedule s = StreamScheduler.plan(g, 4);
        for (int i = 0; i < 6; i++) {
            assertEquals(s.streamOf(0), s.streamOf(i));
        }
        assertEquals(List.of(), s.joins());
    }

    @Test
    void latencyCriticalTasksUseThePriorityStream() {
        TaskGraph g = new TaskGraph();
        int x = g.copy("h2d", 3, Task.Work.NONE);
        int y = g.add("logits", Task.Kind.KERNEL, 2, true, Task.Work.NONE, x);
        Schedule s = StreamScheduler.plan(g, 2);
        assertEquals(s.priorityStream(), s.streamOf(y));
        assertEquals(1, s.joins().size());
    }

    @Test
    void overlapPctIsCopyTimeUnderComputeOverCopyTime() {
        List<Interval> iv = List.of(
                new Interval(0, Task.Kind.KERNEL, 0, 0, 10),
                new Interval(1, Task.Kind.KERNEL, 0, 5, 12),   // union of kernels: [0, 12]
                new Interval(2, Task.Kind.COPY, 1, 8, 16),     // 4 of 8 hidden
                new Interval(3, Task.Kind.COPY, 1, 20, 22));   // 0 of 2 hidden
        assertEquals(100.0 * 4 / 10, Interval.overlapPct(iv), 1e-12);
        assertEquals(0.0, Interval.overlapPct(List.of(new Interval(0, Task.Kind.KERNEL, 0, 0, 1))), 0.0);
    }

    @Test
    void executesOnTheCpuInIssueOrder() {
        TaskGraph g = new TaskGraph();
        List<String> ran = new ArrayList<>();
        int a = g.copy("load", 1, st -> ran.add("load"));
        int b = g.kernel("left", 1, st -> ran.add("left"), a);
        int c = g.kernel("right", 1, st -> ran.add("right"), a);
        g.kernel("join", 1, st -> ran.add("join"), b, c);
        Schedule s = StreamScheduler.plan(g, 2);
        try (CpuDevice cpu = new CpuDevice()) {
            ScheduleExecutor.Trace t = ScheduleExecutor.execute(g, s, cpu);
            assertEquals(List.of("load", "left", "right", "join"), ran);
            assertEquals(4, t.intervals().size());
            for (Interval i : t.intervals()) {
                assertTrue(i.startMs() >= 0 && i.endMs() >= i.startMs(), i.toString());
            }
            assertEquals(0.0, t.overlapPct(), 0.0); // the CPU runs everything in turn
        }
    }
}
