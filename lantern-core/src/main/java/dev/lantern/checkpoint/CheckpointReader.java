package dev.lantern.checkpoint;

import dev.lantern.weights.ContainedPath;
import dev.lantern.weights.SafetensorsFile;
import dev.lantern.weights.TensorInfo;
import dev.lantern.weights.TensorView;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Reads one committed checkpoint and checks every byte against its commit record: the record's
 * manifest hash, then each data file's size and SHA-256, before any tensor is parsed. A fault is a
 * {@link Corrupt} naming the file; a data file the manifest names outside the step's folder is an
 * {@link dev.lantern.weights.UnsafePathException}.
 */
final class CheckpointReader {
    private CheckpointReader() {}

    /** A checkpoint that did not verify: which file, and why. */
    static final class Corrupt extends Exception {
        final String file;

        Corrupt(String file, String reason) {
            super(reason, null, false, false);
            this.file = file;
        }
    }

    /** The checkpoint that {@code commitFile} commits, verified and copied to the heap. */
    static Checkpoint read(Path root, long step, Path commitFile) throws Corrupt {
        String commitName = commitFile.getFileName().toString();
        CommitRecord record;
        try {
            record = CommitRecord.parse(Files.readAllBytes(commitFile));
        } catch (IOException | RuntimeException e) {
            throw new Corrupt(commitName, "unreadable commit record: " + oneLine(e));
        }
        if (record.step() != step) {
            throw new Corrupt(commitName, "names step " + record.step() + ", its file name says " + step);
        }
        Path folder = root.resolve(CheckpointStore.folderName(step));
        String manifestName = CheckpointStore.folderName(step) + "/" + CheckpointStore.MANIFEST;
        byte[] manifestBytes;
        try {
            manifestBytes = Files.readAllBytes(folder.resolve(CheckpointStore.MANIFEST));
        } catch (NoSuchFileException e) {
            throw new Corrupt(manifestName, "missing");
        } catch (IOException e) {
            throw new Corrupt(manifestName, "unreadable: " + oneLine(e));
        }
        if (manifestBytes.length != record.manifestBytes()) {
            throw new Corrupt(manifestName, "is " + manifestBytes.length + " bytes, the commit record says " + record.manifestBytes());
        }
        String sha = DurableFiles.sha256Hex(manifestBytes);
        if (!sha.equals(record.manifestSha256())) {
            throw new Corrupt(manifestName, "SHA-256 " + sha + " differs from the commit record's " + record.manifestSha256());
        }
        CheckpointManifest manifest;
        try {
            manifest = CheckpointManifest.parse(manifestBytes);
        } catch (RuntimeException e) {
            throw new Corrupt(manifestName, "not a manifest: " + oneLine(e));
        }
        Map<String, StoredTensor> tensors = new LinkedHashMap<>();
        for (CheckpointManifest.DataFile f : manifest.files()) {
            Path file = ContainedPath.resolve(folder, f.name(), "checkpoint data file");
            String shown = CheckpointStore.folderName(step) + "/" + f.name();
            verify(file, shown, f);
            readTensors(file, shown, tensors);
        }
        return new Checkpoint(manifest.step(), tensors, manifest.metadata());
    }

    private static void verify(Path file, String shown, CheckpointManifest.DataFile f) throws Corrupt {
        try {
            long size = Files.size(file);
            if (size != f.bytes()) {
                throw new Corrupt(shown, "is " + size + " bytes, the manifest says " + f.bytes() + " (truncated?)");
            }
            String sha = DurableFiles.sha256Hex(file);
            if (!sha.equals(f.sha256())) {
                throw new Corrupt(shown, "SHA-256 " + sha + " differs from the manifest's " + f.sha256());
            }
        } catch (NoSuchFileException e) {
            throw new Corrupt(shown, "missing");
        } catch (IOException e) {
            throw new Corrupt(shown, "unreadable: " + oneLine(e));
        }
    }

    private static void readTensors(Path file, String shown, Map<String, StoredTensor> into) throws Corrupt {
        try (SafetensorsFile sf = SafetensorsFile.open(file)) {
            for (TensorInfo info : sf.tensors()) {
                TensorView v = sf.tensor(info.name());
                MemorySegment copy = Arena.ofAuto().allocate(Math.max(1, v.data().byteSize()), 8).asSlice(0, v.data().byteSize());
                MemorySegment.copy(v.data(), 0, copy, 0, v.data().byteSize());
                if (into.put(info.name(), new StoredTensor(info.dtype(), info.shape(), copy)) != null) {
                    throw new Corrupt(shown, "tensor '" + info.name() + "' is also in another data file");
                }
            }
        } catch (RuntimeException e) {
            // the hash matched, so this is a writer's bug or a hash collision; either way not usable
            throw new Corrupt(shown, "not a safetensors file: " + oneLine(e));
        }
    }

    private static String oneLine(Exception e) {
        String m = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        return m.replace('\n', ' ');
    }
}
