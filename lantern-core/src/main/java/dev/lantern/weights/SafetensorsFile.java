package dev.lantern.weights;

import dev.lantern.weights.SafetensorsException.Kind;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A safetensors file, memory-mapped read-only with FFM: {@link #open} maps the whole file into
 * one {@link MemorySegment} (no byte of it passes through the Java heap), validates the header
 * ({@link SafetensorsHeader#parse}: the data pages are not touched), and only then hands out
 * {@link TensorView}s, slices of the mapping. {@link #close} unmaps; views die with it.
 *
 * <pre>{@code
 * try (SafetensorsFile f = SafetensorsFile.open(Path.of("model.safetensors"))) {
 *     TensorView w = f.tensor("lm_head.weight");   // BF16 [32000, 2048], a view of the mapping
 * }
 * }</pre>
 *
 * The mapping is shared (any thread may read the views). A file truncated by another process
 * while mapped faults on access (as any mapped file does); Lantern never writes over a weights
 * file in place ({@link SafetensorsWriter} renames a new file over it).
 */
public final class SafetensorsFile implements AutoCloseable {
    private final String source;
    private final Arena arena;
    private final MemorySegment bytes;
    private final SafetensorsHeader header;
    private final Map<String, TensorInfo> byName;

    private SafetensorsFile(String source, Arena arena, MemorySegment bytes, SafetensorsHeader header) {
        this.source = source;
        this.arena = arena;
        this.bytes = bytes;
        this.header = header;
        Map<String, TensorInfo> m = new HashMap<>();
        for (TensorInfo t : header.tensors()) {
            m.put(t.name(), t);
        }
        this.byName = m;
    }

    /** Maps and validates {@code path}. */
    public static SafetensorsFile open(Path path) {
        String source = path.toString();
        if (Files.exists(path) && !Files.isRegularFile(path)) {
            // a folder cannot be mapped, and opening a FIFO or a device would block or never end
            throw new SafetensorsException(Kind.IO, source + ": not a regular file");
        }
        Arena arena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size < 8) {
                throw SafetensorsHeader.fail(Kind.TRUNCATED, source, "file is " + size
                        + " bytes, shorter than the 8-byte header length");
            }
            // the mapping outlives the channel; the arena owns it
            MemorySegment mapped = ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
            return new SafetensorsFile(source, arena, mapped, SafetensorsHeader.parse(mapped, source));
        } catch (IOException e) {
            arena.close();
            throw new SafetensorsException(Kind.IO, source + ": cannot read: " + e, e);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /**
     * Validates safetensors bytes already in memory (a buffer, a test's array). The caller keeps
     * ownership of {@code bytes}; {@link #close} does nothing to them.
     */
    public static SafetensorsFile of(MemorySegment bytes, String source) {
        MemorySegment ro = bytes.asReadOnly();
        return new SafetensorsFile(source, null, ro, SafetensorsHeader.parse(ro, source));
    }

    /** The file's name as errors give it. */
    public String source() {
        return source;
    }

    public SafetensorsHeader header() {
        return header;
    }

    /** {@code __metadata__}, in file order (empty when absent). */
    public Map<String, String> metadata() {
        return header.metadata();
    }

    /** The tensors' entries, in the order of their bytes in the file. */
    public List<TensorInfo> tensors() {
        return header.tensors();
    }

    /** The tensor names, in the order of their bytes in the file. */
    public List<String> names() {
        List<String> names = new ArrayList<>(byName.size());
        for (TensorInfo t : header.tensors()) {
            names.add(t.name());
        }
        return Collections.unmodifiableList(names);
    }

    public boolean contains(String name) {
        return byName.containsKey(name);
    }

    /** The entry of tensor {@code name}, or {@code null}. */
    public TensorInfo info(String name) {
        return byName.get(name);
    }

    /**
     * Tensor {@code name}, a view of the mapping.
     *
     * @throws SafetensorsException {@code MISSING_TENSOR} when the file has no such tensor
     */
    public TensorView tensor(String name) {
        TensorInfo t = byName.get(name);
        if (t == null) {
            throw new SafetensorsException(Kind.MISSING_TENSOR, source + ": no tensor " + JsonParser.quoteForMessage(name)
                    + " (the file has " + byName.size() + ")");
        }
        return new TensorView(t, bytes.asSlice(header.dataStart() + t.begin(), t.byteSize()));
    }

    /** Unmaps the file; the views it gave out are invalid from now on. */
    @Override
    public void close() {
        if (arena != null && arena.scope().isAlive()) {
            arena.close();
        }
    }
}
