package dev.lantern.checkpoint;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A crash simulated in-process at every phase of a write (the phase listener throws, the store does
 * no cleanup, the next open sees what a killed process would leave): the checkpoint is either
 * fully the old one or fully the new one, never torn, and the folder ends clean. The child-process
 * version with real SIGKILLs is CrashHarnessTest.
 */
class CheckpointCrashPhasesTest {
    @TempDir
    Path dir;

    static final class SimulatedCrash extends RuntimeException {
        SimulatedCrash(CheckpointPhase p) {
            super("simulated crash at " + p, null, false, false);
        }
    }

    @Test
    void aCrashAtEveryPhaseLeavesTheOldOrTheNewCheckpoint() throws IOException {
        for (CheckpointPhase crashAt : CheckpointPhase.values()) {
            for (int occurrence = 0; occurrence < (crashAt == CheckpointPhase.DATA_FILE_WRITTEN ? 3 : 1); occurrence++) {
                Path d = dir.resolve(crashAt + "-" + occurrence);
                Checkpoint old = CheckpointStoreTest.sample(1, 11);
                Checkpoint neu = CheckpointStoreTest.sample(2, 22);
                try (CheckpointStore s = CheckpointStore.open(d, CheckpointStore.Options.defaults().withKeepLast(1))) {
                    s.write(old);
                }
                int[] seen = {0};
                int when = occurrence;
                CheckpointStore.Options crashing = CheckpointStore.Options.defaults().withKeepLast(1).withShardBytes(64)
                        .withListener((p, step) -> {
                            if (p == crashAt && seen[0]++ == when) {
                                throw new SimulatedCrash(p);
                            }
                        });
                try (CheckpointStore s = CheckpointStore.open(d, crashing)) {
                    assertThrows(SimulatedCrash.class, () -> s.write(neu));
                }
                boolean visible = crashAt.compareTo(CheckpointPhase.COMMITTED) >= 0;
                try (CheckpointStore s = CheckpointStore.open(d)) {
                    CheckpointStore.Restored r = s.restoreLatest();
                    String where = "crash at " + crashAt + " #" + occurrence;
                    assertTrue(r.checkpoint().sameAs(visible ? neu : old), where);
                    assertEquals(List.of(), r.skipped(), where);
                    // nothing but committed checkpoints and the lock remain
                    try (Stream<Path> files = Files.list(d)) {
                        List<String> names = files.map(p -> p.getFileName().toString()).sorted().toList();
                        assertTrue(names.stream().allMatch(n -> n.equals("lock") || n.startsWith("commit-") || n.startsWith("step-")),
                                where + ": " + names);
                        assertTrue(names.contains(visible ? "commit-000000000002.json" : "commit-000000000001.json"), where + ": " + names);
                    }
                    // and the next write works
                    s.write(CheckpointStoreTest.sample(3, 33));
                    assertTrue(s.restoreLatest().checkpoint().sameAs(CheckpointStoreTest.sample(3, 33)), where);
                }
            }
        }
    }

    @Test
    void theNewestIsNeverDeletedByRetentionBeforeItIsDurable() {
        // a crash just before the directory is forced (COMMITTED) or during retention (DURABLE) keeps the newest
        for (CheckpointPhase crashAt : List.of(CheckpointPhase.COMMITTED, CheckpointPhase.DURABLE)) {
            Path d = dir.resolve("ret-" + crashAt);
            try (CheckpointStore s = CheckpointStore.open(d, CheckpointStore.Options.defaults().withKeepLast(1))) {
                s.write(CheckpointStoreTest.sample(1, 1));
            }
            CheckpointStore.Options crashing = CheckpointStore.Options.defaults().withKeepLast(1).withListener((p, step) -> {
                if (p == crashAt) {
                    throw new SimulatedCrash(p);
                }
            });
            try (CheckpointStore s = CheckpointStore.open(d, crashing)) {
                assertThrows(SimulatedCrash.class, () -> s.write(CheckpointStoreTest.sample(2, 2)));
                // retention has not run: both are still committed
                assertEquals(List.of(1L, 2L), s.committedSteps());
            }
        }
    }
}
