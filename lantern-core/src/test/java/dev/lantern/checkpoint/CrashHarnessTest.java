package dev.lantern.checkpoint;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The crash test of issue 17 on the CPU: {@link ToyTrainer} in a child JVM, SIGKILLed
 * {@value #KILLS} times at random points (most of them inside checkpoint writes), resumed each
 * time, must end bit-identical to an uninterrupted run. Each restart is checked by the harness.
 * Prints the kill count, where the kills landed and the time (surefire's report file).
 */
class CrashHarnessTest {
    static final int KILLS = Integer.getInteger("lantern.crash.kills", 200);

    @TempDir
    Path tmp;

    /** The child JVM: the test class path, tuned for start-up (C1 only, serial GC). */
    static CrashHarness.Command toyTrainer(int every) {
        return (dir, resume, steps) -> {
            List<String> argv = new ArrayList<>(List.of(
                    System.getProperty("java.home") + File.separator + "bin" + File.separator + "java",
                    "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx64m", "-XX:-UsePerfData",
                    "-cp", System.getProperty("java.class.path"), ToyTrainer.class.getName(),
                    "--checkpoint-dir", dir.toString(), "--checkpoint-every", Integer.toString(every),
                    "--steps", Long.toString(steps), "--size", "4096"));
            if (resume) {
                argv.add("--resume");
            }
            return argv;
        };
    }

    @Test
    void everyKilledRunResumesFromItsLastCommitAndEndsBitIdentical() throws Exception {
        // Lanes run side by side, each its own folder and seed: a life is mostly JVM start-up and
        // fsync waits, so two lanes on two cores do nearly twice the kills in the same time.
        int every = 5;
        int lanes = 2;
        CrashHarness.Command cmd = toyTrainer(every);
        long t0 = System.nanoTime();
        List<CrashHarness.Report> reports = new ArrayList<>();
        try (var pool = Executors.newFixedThreadPool(lanes)) {
            List<Future<CrashHarness.Report>> futures = new ArrayList<>();
            for (int lane = 0; lane < lanes; lane++) {
                CrashHarness h = new CrashHarness(cmd, tmp.resolve("crashed-" + lane), 17 + lane);
                int kills = KILLS / lanes + (lane < KILLS % lanes ? 1 : 0);
                futures.add(pool.submit(() -> h.run(kills, 1_000_000, every, 4)));
            }
            for (Future<CrashHarness.Report> f : futures) {
                reports.add(f.get());
            }
        }
        double crashSeconds = (System.nanoTime() - t0) / 1e9;
        long last = reports.stream().mapToLong(CrashHarness.Report::finalStep).max().orElseThrow();
        long t1 = System.nanoTime();
        Map<Long, String> reference = new CrashHarness(cmd, tmp.resolve("unused"), 0).uninterrupted(tmp.resolve("reference"), last);
        double refSeconds = (System.nanoTime() - t1) / 1e9;
        Map<String, Integer> byLine = new TreeMap<>();
        reports.forEach(r -> r.killsByLastLine().forEach((k, v) -> byLine.merge(k, v, Integer::sum)));
        int kills = reports.stream().mapToInt(CrashHarness.Report::kills).sum();
        int duringWrites = reports.stream().mapToInt(CrashHarness.Report::killsDuringWrites).sum();
        System.out.printf("crash test: %d kills (%d inside checkpoint writes) in %d lanes, %.1f s (+ %.1f s for the uninterrupted run to step %d); "
                + "last line read before each kill: %s%n", kills, duringWrites, lanes, crashSeconds, refSeconds, last, byLine);
        assertEquals(KILLS, kills);
        for (CrashHarness.Report r : reports) {
            assertEquals(null, r.firstMismatch(reference));
            assertEquals(reference.get(r.finalStep()), r.finalHash(), "a resumed run's final state differs from the uninterrupted run's");
        }
        assertEquals(reference.get(last), reference.get(-1L));
        assertTrue(duringWrites >= KILLS / 3, "only " + duringWrites + " kills landed inside checkpoint writes");
    }
}
