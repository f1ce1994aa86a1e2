package dev.lantern.checkpoint;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The crash test with {@code lantern train}'s own loop ({@link TrainerCrashChild}: compiled forward
 * and backward, AdamW, f16 loss scaler, data stream, checkpoints through {@link CheckpointStore}),
 * SIGKILLed {@value #KILLS} times, most inside checkpoint writes: every restart resumes from the
 * newest commit with the uninterrupted run's weights, and the run ends with them bit for bit. (The
 * 200-kill CI figure is {@link CrashHarnessTest}'s, whose child starts in a fraction of the time.)
 */
class TrainerCrashTest {
    static final int KILLS = Integer.getInteger("lantern.crash.trainerKills", 20);

    @TempDir
    Path tmp;

    static CrashHarness.Command child(int every) {
        return (dir, resume, steps) -> {
            List<String> argv = new ArrayList<>(List.of(
                    System.getProperty("java.home") + File.separator + "bin" + File.separator + "java",
                    "--add-modules=jdk.incubator.vector", "-XX:+UseSerialGC", "-Xmx256m", "-Dlantern.cpu.threads=1",
                    "-cp", System.getProperty("java.class.path"), TrainerCrashChild.class.getName(),
                    "--checkpoint-dir", dir.toString(), "--checkpoint-every", Integer.toString(every), "--steps", Long.toString(steps)));
            if (resume) {
                argv.add("--resume");
            }
            return argv;
        };
    }

    @Test
    void killedTrainingRunsResumeBitIdentical() throws Exception {
        int every = 2;
        CrashHarness.Command cmd = child(every);
        long t0 = System.nanoTime();
        CrashHarness.Report r = new CrashHarness(cmd, tmp.resolve("crashed"), 23).run(KILLS, 1_000_000, every, 2);
        Map<Long, String> reference = new CrashHarness(cmd, tmp.resolve("unused"), 0).uninterrupted(tmp.resolve("reference"), r.finalStep());
        System.out.printf("trainer crash test: %d kills (%d inside checkpoint writes), final step %d, %.1f s%n", r.kills(),
                r.killsDuringWrites(), r.finalStep(), (System.nanoTime() - t0) / 1e9);
        assertEquals(KILLS, r.kills());
        assertNull(r.firstMismatch(reference));
        assertEquals(reference.get(r.finalStep()), r.finalHash(), "the killed and resumed run ends with the uninterrupted run's weights");
    }
}
