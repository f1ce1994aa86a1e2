package dev.lantern.checkpoint;

import dev.lantern.checkpoint.CheckpointException.Kind;
import dev.lantern.weights.SafetensorsWriter;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Checkpoints in one folder, written so that a crash at any instant leaves either the previous
 * checkpoint or the new one as the latest, never a torn one (docs/determinism.md). A write:
 * <ol>
 * <li>writes the tensors as safetensors files in a partial folder {@code .partial-step-N}, each
 *     forced to disk ({@link CheckpointPhase#DATA_FILE_WRITTEN});
 * <li>writes the manifest (each file's name, size and SHA-256; the metadata) and forces it;
 * <li>forces the partial folder and renames it to {@code step-N};
 * <li>writes the commit record {@code commit-N.json} (the manifest's size and SHA-256) under a
 *     temporary name, forces it, and renames it into place: the commit;
 * <li>forces the store's folder (the commit survives a power loss), and only then deletes the
 *     checkpoints past {@code keepLast}, each commit record before its folder.
 * </ol>
 * {@link #open} deletes what a crash left (partial folders, temporary files, step folders with no
 * commit record). {@link #restoreLatest} takes the newest committed checkpoint whose hashes verify,
 * and names each newer one it passed over ({@link CorruptCheckpoint}). The commit records in step
 * order are the log; it is linear: writing step N first drops committed steps ≥ N (the future of
 * a run that resumed from an earlier checkpoint). One writer at a time: the store holds a file lock
 * on {@code lock} while open (released by the OS when a process dies).
 */
public final class CheckpointStore implements AutoCloseable {
    static final String MANIFEST = "manifest.json";
    private static final Pattern STEP_FOLDER = Pattern.compile("step-(\\d{12})");
    private static final Pattern COMMIT = Pattern.compile("commit-(\\d{12})\\.json");

    /** Hears each phase of a write; may throw to simulate a crash there (the store then does no cleanup). */
    @FunctionalInterface
    public interface PhaseListener {
        void reached(CheckpointPhase phase, long step);
    }

    /**
     * @param keepLast   committed checkpoints kept (≥ 1); older ones are deleted after a commit is durable
     * @param shardBytes a data file is closed once it holds this many tensor bytes (one tensor is never split)
     * @param listener   hears the write phases (tests and the crash harness); {@code (p, s) -> {}} for none
     */
    public record Options(int keepLast, long shardBytes, PhaseListener listener) {
        public Options {
            if (keepLast < 1) {
                throw new CheckpointException(Kind.BAD_REQUEST, "keepLast must be >= 1, found " + keepLast);
            }
            if (shardBytes < 1) {
                throw new CheckpointException(Kind.BAD_REQUEST, "shardBytes must be >= 1, found " + shardBytes);
            }
        }

        public static Options defaults() {
            return new Options(3, 1L << 30, (p, s) -> { });
        }

        public Options withKeepLast(int n) {
            return new Options(n, shardBytes, listener);
        }

        public Options withShardBytes(long b) {
            return new Options(keepLast, b, listener);
        }

        public Options withListener(PhaseListener l) {
            return new Options(keepLast, shardBytes, l);
        }
    }

    /** What {@link #restoreLatest} found: the checkpoint, and the newer committed ones that did not verify. */
    public record Restored(Checkpoint checkpoint, List<CorruptCheckpoint> skipped) {}

    private final Path root;
    private final Options options;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final List<String> cleaned;

    private CheckpointStore(Path root, Options options, FileChannel lockChannel, FileLock lock, List<String> cleaned) {
        this.root = root;
        this.options = options;
        this.lockChannel = lockChannel;
        this.lock = lock;
        this.cleaned = List.copyOf(cleaned);
    }

    /** Opens (creating it when missing) the store in {@code dir}, takes its lock, and deletes what a crash left. */
    public static CheckpointStore open(Path dir, Options options) {
        Path root = dir.toAbsolutePath().normalize();
        FileChannel ch = null;
        try {
            Files.createDirectories(root);
            ch = FileChannel.open(root.resolve("lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock lock;
            try {
                lock = ch.tryLock();
            } catch (OverlappingFileLockException e) {
                lock = null;
            }
            if (lock == null) {
                throw new CheckpointException(Kind.LOCKED, root + ": another writer holds the checkpoint folder's lock");
            }
            return new CheckpointStore(root, options, ch, lock, cleanLeftovers(root));
        } catch (IOException e) {
            closeQuietly(ch);
            throw new CheckpointException(Kind.IO, root + ": cannot open the checkpoint folder: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            closeQuietly(ch);
            throw e;
        }
    }

    public static CheckpointStore open(Path dir) {
        return open(dir, Options.defaults());
    }

    public Path root() {
        return root;
    }

    /** What {@link #open} deleted: names of partial folders, temporary files, uncommitted step folders. */
    public List<String> cleaned() {
        return cleaned;
    }

    /** The committed steps, oldest first (committed is not verified: {@link #restoreLatest} checks the hashes). */
    public List<Long> committedSteps() {
        return new ArrayList<>(commits().keySet());
    }

    /** Writes {@code c} as described in the class comment; returns when it is committed and durable. */
    public void write(Checkpoint c) {
        long step = c.step();
        PhaseListener hear = options.listener();
        try {
            dropFrom(step);
            Path partial = root.resolve(".partial-" + folderName(step));
            DurableFiles.deleteTree(partial);
            Files.createDirectory(partial);
            hear.reached(CheckpointPhase.BEGIN, step);
            List<CheckpointManifest.DataFile> files = new ArrayList<>();
            for (Map<String, StoredTensor> shard : shards(c.tensors())) {
                String name = String.format("tensors-%05d.safetensors", files.size());
                SafetensorsWriter w = new SafetensorsWriter().metadata("format", "lantern-checkpoint");
                shard.forEach((n, t) -> w.add(n, t.dtype(), t.shape(), t.data()));
                try (DurableFiles.HashingFile f = new DurableFiles.HashingFile(partial.resolve(name))) {
                    w.writeTo(f);
                    files.add(new CheckpointManifest.DataFile(name, f.bytes(), f.finish()));
                }
                hear.reached(CheckpointPhase.DATA_FILE_WRITTEN, step);
            }
            byte[] manifest = new CheckpointManifest(step, c.metadata(), files).toJson();
            String manifestSha = DurableFiles.writeForced(partial.resolve(MANIFEST), manifest);
            DurableFiles.forceFolder(partial);
            hear.reached(CheckpointPhase.MANIFEST_WRITTEN, step);
            DurableFiles.renameAtomically(partial, root.resolve(folderName(step)));
            hear.reached(CheckpointPhase.FOLDER_RENAMED, step);
            Path commitTmp = root.resolve("." + commitName(step) + ".tmp");
            Files.deleteIfExists(commitTmp);
            DurableFiles.writeForced(commitTmp, new CommitRecord(step, manifest.length, manifestSha).toJson());
            hear.reached(CheckpointPhase.COMMIT_RECORD_WRITTEN, step);
            DurableFiles.renameAtomically(commitTmp, root.resolve(commitName(step)));
            hear.reached(CheckpointPhase.COMMITTED, step);
            DurableFiles.forceFolder(root);
            hear.reached(CheckpointPhase.DURABLE, step);
            retain();
            hear.reached(CheckpointPhase.RETAINED, step);
        } catch (IOException e) {
            throw new CheckpointException(Kind.IO, root + ": cannot write checkpoint step " + step + ": " + e.getMessage(), e);
        }
    }

    /**
     * The newest committed checkpoint that verifies, with the newer ones passed over.
     *
     * @throws CheckpointException {@link Kind#NONE_COMMITTED} when none is committed, {@link Kind#ALL_CORRUPT}
     *                             when none verifies (the message names each fault)
     */
    public Restored restoreLatest() {
        TreeMap<Long, Path> commits = commits();
        if (commits.isEmpty()) {
            throw new CheckpointException(Kind.NONE_COMMITTED, root + ": no committed checkpoint");
        }
        List<CorruptCheckpoint> skipped = new ArrayList<>();
        for (Map.Entry<Long, Path> e : commits.descendingMap().entrySet()) {
            try {
                return new Restored(CheckpointReader.read(root, e.getKey(), e.getValue()), List.copyOf(skipped));
            } catch (CheckpointReader.Corrupt bad) {
                skipped.add(new CorruptCheckpoint(e.getKey(), bad.file, bad.getMessage()));
            }
        }
        throw new CheckpointException(Kind.ALL_CORRUPT, root + ": every committed checkpoint is corrupt: "
                + String.join("; ", skipped.stream().map(CorruptCheckpoint::message).toList()));
    }

    @Override
    public void close() {
        try {
            lock.release();
        } catch (IOException ignored) {
            // closing the channel releases it as well
        }
        closeQuietly(lockChannel);
    }

    static String folderName(long step) {
        return String.format("step-%012d", step);
    }

    static String commitName(long step) {
        return String.format("commit-%012d.json", step);
    }

    /** The tensors in name order, cut into groups of about {@code shardBytes}. */
    private List<Map<String, StoredTensor>> shards(Map<String, StoredTensor> tensors) {
        List<Map<String, StoredTensor>> out = new ArrayList<>();
        Map<String, StoredTensor> cur = new TreeMap<>();
        long bytes = 0;
        for (Map.Entry<String, StoredTensor> e : tensors.entrySet()) {
            if (!cur.isEmpty() && bytes + e.getValue().data().byteSize() > options.shardBytes()) {
                out.add(cur);
                cur = new TreeMap<>();
                bytes = 0;
            }
            cur.put(e.getKey(), e.getValue());
            bytes += e.getValue().data().byteSize();
        }
        out.add(cur); // an empty checkpoint still has one (empty) data file
        return out;
    }

    /** Commit records by step. */
    private TreeMap<Long, Path> commits() {
        TreeMap<Long, Path> m = new TreeMap<>();
        for (Path p : list(root)) {
            Matcher c = COMMIT.matcher(p.getFileName().toString());
            if (c.matches()) {
                m.put(Long.parseLong(c.group(1)), p);
            }
        }
        return m;
    }

    /** Drops committed steps ≥ {@code step}: each commit record (forced away) before its folder. */
    private void dropFrom(long step) throws IOException {
        List<Long> later = commits().tailMap(step, true).keySet().stream().toList();
        for (long s : later) {
            Files.deleteIfExists(root.resolve(commitName(s)));
        }
        if (!later.isEmpty()) {
            DurableFiles.forceFolder(root);
        }
        for (long s : later) {
            DurableFiles.deleteTree(root.resolve(folderName(s)));
        }
    }

    /** Deletes committed checkpoints older than the newest {@code keepLast}; runs after the newest is durable. */
    private void retain() throws IOException {
        List<Long> steps = committedSteps();
        List<Long> old = steps.subList(0, Math.max(0, steps.size() - options.keepLast()));
        for (long s : old) {
            Files.deleteIfExists(root.resolve(commitName(s)));
        }
        if (!old.isEmpty()) {
            DurableFiles.forceFolder(root);
        }
        for (long s : old) {
            DurableFiles.deleteTree(root.resolve(folderName(s)));
        }
    }

    /** Partial folders, temporary files, and step folders whose commit record never landed. */
    private static List<String> cleanLeftovers(Path root) throws IOException {
        List<String> cleaned = new ArrayList<>();
        for (Path p : list(root)) {
            String name = p.getFileName().toString();
            Matcher f = STEP_FOLDER.matcher(name);
            boolean uncommitted = f.matches() && !Files.exists(root.resolve(commitName(Long.parseLong(f.group(1)))));
            if (name.startsWith(".partial-") || name.endsWith(".tmp") || uncommitted) {
                DurableFiles.deleteTree(p);
                cleaned.add(name);
            }
        }
        if (!cleaned.isEmpty()) {
            DurableFiles.forceFolder(root);
        }
        return cleaned;
    }

    private static List<Path> list(Path dir) {
        try (Stream<Path> s = Files.list(dir)) {
            return s.sorted().toList();
        } catch (IOException e) {
            throw new CheckpointException(Kind.IO, dir + ": cannot list the checkpoint folder: " + e.getMessage(), e);
        }
    }

    private static void closeQuietly(FileChannel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // nothing to report beyond the error already thrown
            }
        }
    }
}
