package dev.lantern.checkpoint;

import dev.lantern.weights.SafetensorsDType;
import dev.lantern.weights.UnsafePathException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Round trips, retention, the lock, and what a store answers for damaged folders (no crash here: see CheckpointCrashPhasesTest). */
class CheckpointStoreTest {
    @TempDir
    Path dir;

    /** A checkpoint of seeded random tensors in five dtypes (random bits, so NaN patterns and subnormals too). */
    static Checkpoint sample(long step, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        Map<String, StoredTensor> t = new TreeMap<>();
        t.put("w.f32", random(SafetensorsDType.F32, new long[] {7, 13}, r));
        t.put("w.bf16", random(SafetensorsDType.BF16, new long[] {5, 3}, r));
        t.put("m.f16", random(SafetensorsDType.F16, new long[] {11}, r));
        t.put("ids.i32", random(SafetensorsDType.I32, new long[] {2, 2, 3}, r));
        t.put("pos.i64", random(SafetensorsDType.I64, new long[] {4}, r));
        t.put("scalar", random(SafetensorsDType.F32, new long[] {}, r));
        Map<String, String> meta = Map.of("rng", "{\"state\": \"" + r.nextLong() + "\"}", "scaler", "65536.0", "data_position", "step " + step);
        return new Checkpoint(step, t, meta);
    }

    static StoredTensor random(SafetensorsDType dtype, long[] shape, SplittableRandom r) {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        byte[] b = new byte[(int) (n * dtype.bytes())];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) r.nextInt(256);
        }
        MemorySegment s = Arena.ofAuto().allocate(Math.max(1, b.length)).asSlice(0, b.length);
        MemorySegment.copy(MemorySegment.ofArray(b), 0, s, 0, b.length);
        return new StoredTensor(dtype, shape, s);
    }

    @Test
    void roundTripIsBitExactInEveryDtype() {
        Checkpoint c = sample(7, 1);
        try (CheckpointStore s = CheckpointStore.open(dir)) {
            s.write(c);
            CheckpointStore.Restored r = s.restoreLatest();
            assertTrue(r.checkpoint().sameAs(c));
            assertEquals(List.of(), r.skipped());
            assertEquals(List.of(7L), s.committedSteps());
        }
        try (CheckpointStore s = CheckpointStore.open(dir)) { // and from a fresh process's view
            assertTrue(s.restoreLatest().checkpoint().sameAs(c));
            assertEquals(List.of(), s.cleaned());
        }
    }

    @Test
    void manyShardsHoldEveryTensorOnce() throws IOException {
        Checkpoint c = sample(3, 2);
        try (CheckpointStore s = CheckpointStore.open(dir, CheckpointStore.Options.defaults().withShardBytes(64))) {
            s.write(c);
            assertTrue(s.restoreLatest().checkpoint().sameAs(c));
        }
        try (Stream<Path> files = Files.list(dir.resolve("step-000000000003"))) {
            assertTrue(files.filter(p -> p.toString().endsWith(".safetensors")).count() >= 3);
        }
    }

    @Test
    void theSameCheckpointWritesTheSameBytes() throws IOException {
        try (CheckpointStore s = CheckpointStore.open(dir)) {
            s.write(sample(1, 5));
            byte[] first = Files.readAllBytes(dir.resolve("step-000000000001/tensors-00000.safetensors"));
            s.write(sample(1, 5)); // the same step again: the log is truncated and rewritten
            assertTrue(java.util.Arrays.equals(first, Files.readAllBytes(dir.resolve("step-000000000001/tensors-00000.safetensors"))));
        }
    }

    @Test
    void retentionKeepsTheLastN() throws IOException {
        try (CheckpointStore s = CheckpointStore.open(dir, CheckpointStore.Options.defaults().withKeepLast(2))) {
            for (long step = 10; step <= 50; step += 10) {
                s.write(sample(step, step));
            }
            assertEquals(List.of(40L, 50L), s.committedSteps());
            assertTrue(s.restoreLatest().checkpoint().sameAs(sample(50, 50)));
        }
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(List.of("commit-000000000040.json", "commit-000000000050.json", "lock", "step-000000000040", "step-000000000050"),
                    files.map(p -> p.getFileName().toString()).sorted().toList());
        }
    }

    @Test
    void writingAnEarlierStepDropsTheLaterOnes() {
        try (CheckpointStore s = CheckpointStore.open(dir)) {
            s.write(sample(10, 1));
            s.write(sample(20, 2));
            s.write(sample(30, 3));
            s.write(sample(20, 4)); // a run resumed from 10 reaches 20 again: 20 and 30 of the old run are gone
            assertEquals(List.of(10L, 20L), s.committedSteps());
            assertTrue(s.restoreLatest().checkpoint().sameAs(sample(20, 4)));
        }
    }

    @Test
    void aFlippedByteInADataFileIsNamedAndThePreviousCheckpointServes() throws IOException {
        try (CheckpointStore s = CheckpointStore.open(dir)) {
            s.write(sample(1, 1));
            s.write(sample(2, 2));
        }
        Path data = dir.resolve("step-000000000002/tensors-00000.safetensors");
        byte[] b = Files.readAllBytes(data);
        b[b.length - 5] ^= 0x10; // a tensor byte: the safetensors header still parses, only the hash can tell
        Files.write(data, b);
        try (CheckpointStore s = CheckpointStore.open(dir)) {
            CheckpointStore.Restored r = s.restoreLatest();
            assertTrue(r.checkpoint().sameAs(sample(1, 1)));
            assertEquals(1, r.skipped().size());
            CorruptCheckpoint bad = r.skipped().getFirst();
            assertEquals(2, bad.step());
            assertEquals("step-000000000002/tensors-00000.safetensors", bad.file());
            assertTrue(bad.reason().contains("SHA-256"), bad.reason());
        }
    }

    @Test
    void aTruncatedDataFileIsNamedAndThePreviousCheckpointServes() throws IOException {
        try (CheckpointStore s = CheckpointStore.open(dir)) {
            s.write(sample(1, 1));
            s.write(sample(2, 2));
        }
        Path data = dir.resolve("step-000000000002/tensors-00000.safetensors");
        byte[] b = Files.readAllBytes(data);
        Files.write(data, java.util.Arrays.copyOf(b, b.length - 100));
        try (CheckpointStore s = CheckpointStore.open(dir)) {
            CheckpointStore.Restored r = s.restoreLatest();
            assertTrue(r.checkpoint().sameAs(sample(1, 1)));
            assertTrue(r.skipped().getFirst().reason().contains("truncated"), r.skipped().getFirst().reason());
        }
    }

    @Test
    void aDamagedManifestOrCommitRecordFallsBackToo() throws IOException {
        try (CheckpointStore s = CheckpointStore.open(dir)) {
            s.write(sample(1, 1));
            s.write(sample(2, 2));
            s.write(sample(3, 3));
        }
        Path manifest = dir.resolve("step-000000000003/manifest.json");
        Files.writeString(manifest, Files.readString(manifest).replace("\"step\": 3", "\"step\": 4"));
        Files.writeString(dir.resolve("commit-000000000002.json"), "{\"format\": ");
        try (CheckpointStore s = CheckpointStore.open(dir)) {
            CheckpointStore.Restored r = s.restoreLatest();
            assertTrue(r.checkpoint().sameAs(sample(1, 1)));
            assertEquals(List.of("step-000000000003/manifest.json", "commit-000000000002.json"),
                    r.skipped().stream().map(CorruptCheckpoint::file).toList());
        }
    }

    @Test
    void everyCheckpointCorruptIsTypedAndNamesEachFault() throws IOException {
        try (CheckpointStore s = CheckpointStore.open(dir)) {
            s.write(sample(1, 1));
            s.write(sample(2, 2));
        }
        Files.delete(dir.resolve("step-000000000001/tensors-00000.safetensors"));
        Files.write(dir.resolve("step-000000000002/tensors-00000.safetensors"), new byte[] {1, 2, 3});
        try (CheckpointStore s = CheckpointStore.open(dir)) {
            CheckpointException e = assertThrows(CheckpointException.class, s::restoreLatest);
            assertEquals(CheckpointException.Kind.ALL_CORRUPT, e.kind());
            assertTrue(e.getMessage().contains("step 1: step-000000000001/tensors-00000.safetensors: missing"), e.getMessage());
            assertTrue(e.getMessage().contains("step 2: step-000000000002/tensors-00000.safetensors: is 3 bytes"), e.getMessage());
        }
    }

    @Test
    void anEmptyFolderHasNoCheckpoint() {
        try (CheckpointStore s = CheckpointStore.open(dir.resolve("fresh"))) {
            assertEquals(CheckpointException.Kind.NONE_COMMITTED, assertThrows(CheckpointException.class, s::restoreLatest).kind());
        }
    }

    @Test
    void aManifestNamingAFileOutsideItsFolderIsRefused() throws IOException {
        try (CheckpointStore s = CheckpointStore.open(dir)) {
            s.write(sample(1, 1));
        }
        // a hostile folder: a manifest (with a matching commit record) that points outside
        byte[] manifest = new CheckpointManifest(1, Map.of(), List.of(new CheckpointManifest.DataFile("../../etc/passwd", 1, "00"))).toJson();
        Files.write(dir.resolve("step-000000000001/manifest.json"), manifest);
        Files.write(dir.resolve("commit-000000000001.json"),
                new CommitRecord(1, manifest.length, DurableFiles.sha256Hex(manifest)).toJson());
        try (CheckpointStore s = CheckpointStore.open(dir)) {
            assertThrows(UnsafePathException.class, s::restoreLatest);
        }
    }

    @Test
    void oneWriterAtATime() {
        try (CheckpointStore s = CheckpointStore.open(dir)) {
            CheckpointException e = assertThrows(CheckpointException.class, () -> CheckpointStore.open(dir));
            assertEquals(CheckpointException.Kind.LOCKED, e.kind());
        }
        CheckpointStore.open(dir).close(); // released
    }

    @Test
    void leftoversOfACrashAreCleanedOnOpen() throws IOException {
        try (CheckpointStore s = CheckpointStore.open(dir)) {
            s.write(sample(1, 1));
        }
        Files.createDirectories(dir.resolve(".partial-step-000000000002"));
        Files.writeString(dir.resolve(".partial-step-000000000002/tensors-00000.safetensors"), "half");
        Files.createDirectories(dir.resolve("step-000000000003"));
        Files.writeString(dir.resolve(".commit-000000000003.json.tmp"), "{", StandardCharsets.UTF_8);
        try (CheckpointStore s = CheckpointStore.open(dir)) {
            assertEquals(List.of(".commit-000000000003.json.tmp", ".partial-step-000000000002", "step-000000000003"), s.cleaned());
            assertTrue(s.restoreLatest().checkpoint().sameAs(sample(1, 1)));
        }
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(List.of("commit-000000000001.json", "lock", "step-000000000001"),
                    files.map(p -> p.getFileName().toString()).sorted().toList());
        }
    }
}
