package dev.lantern.weights;

import dev.lantern.util.JsonStrings;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Writes a safetensors file, deterministically and atomically. The same tensors and metadata
 * give the same bytes whatever order they were added in: metadata keys sorted, tensors laid out
 * as the reference implementation lays them (descending dtype, then name; so each tensor is
 * aligned to its element size), the header padded with spaces to a multiple of 8 (so the data is
 * 8-aligned in the file). {@link #write(Path)} writes a temporary file in the target's folder,
 * forces it to disk, and renames it over the target: a reader sees the old file or the new one,
 * never half of one, even if the process dies mid-write.
 *
 * <pre>{@code
 * new SafetensorsWriter().metadata("format", "pt")
 *         .add("w", SafetensorsDType.F32, new long[] {2, 3}, segment)   // 24 bytes, little-endian
 *         .write(Path.of("ckpt.safetensors"));
 * }</pre>
 */
public final class SafetensorsWriter {
    private record Pending(String name, SafetensorsDType dtype, long[] shape, MemorySegment data) {}

    private static final long CHUNK = 1L << 30;

    private final Map<String, String> metadata = new TreeMap<>();
    private final Map<String, Pending> tensors = new LinkedHashMap<>();

    public SafetensorsWriter metadata(String key, String value) {
        metadata.put(key, value);
        return this;
    }

    /**
     * Adds tensor {@code name}; {@code data} holds its elements row-major, little-endian, and is
     * read when the file is written (not copied here).
     */
    public SafetensorsWriter add(String name, SafetensorsDType dtype, long[] shape, MemorySegment data) {
        if (name.equals(SafetensorsHeader.METADATA_KEY)) {
            throw new IllegalArgumentException("a tensor cannot be named " + SafetensorsHeader.METADATA_KEY);
        }
        if (tensors.containsKey(name)) {
            throw new IllegalArgumentException("tensor " + JsonParser.quoteForMessage(name) + " added twice");
        }
        long numel = 1;
        for (long d : shape) {
            if (d < 0) {
                throw new IllegalArgumentException("negative dimension in " + Arrays.toString(shape));
            }
            numel = Math.multiplyExact(numel, d);
        }
        long bytes = Math.multiplyExact(numel, dtype.bytes());
        if (data.byteSize() != bytes) {
            throw new IllegalArgumentException("tensor " + JsonParser.quoteForMessage(name) + ": " + dtype + " "
                    + Arrays.toString(shape) + " needs " + bytes + " bytes, data has " + data.byteSize());
        }
        tensors.put(name, new Pending(name, dtype, shape.clone(), data));
        return this;
    }

    /** The tensors in file order. */
    private List<Pending> layout() {
        List<Pending> order = new ArrayList<>(tensors.values());
        order.sort(Comparator.comparing(Pending::dtype, Comparator.reverseOrder()).thenComparing(Pending::name));
        return order;
    }

    /** The 8-byte length and the padded JSON header, as they start the file. */
    public byte[] header() {
        StringBuilder b = new StringBuilder("{");
        if (!metadata.isEmpty()) {
            JsonStrings.quote(b, SafetensorsHeader.METADATA_KEY);
            b.append(":{");
            String sep = "";
            for (Map.Entry<String, String> e : metadata.entrySet()) {
                b.append(sep);
                JsonStrings.quote(b, e.getKey());
                b.append(':');
                JsonStrings.quote(b, e.getValue());
                sep = ",";
            }
            b.append('}');
        }
        long offset = 0;
        for (Pending p : layout()) {
            if (b.length() > 1) {
                b.append(',');
            }
            JsonStrings.quote(b, p.name());
            b.append(":{\"dtype\":\"").append(p.dtype().name()).append("\",\"shape\":[");
            for (int i = 0; i < p.shape().length; i++) {
                b.append(i == 0 ? "" : ",").append(p.shape()[i]);
            }
            long end = offset + p.data().byteSize();
            b.append("],\"data_offsets\":[").append(offset).append(',').append(end).append("]}");
            offset = end;
        }
        b.append('}');
        byte[] json = b.toString().getBytes(StandardCharsets.UTF_8);
        int padded = (json.length + 7) / 8 * 8;
        ByteBuffer out = ByteBuffer.allocate(8 + padded).order(ByteOrder.LITTLE_ENDIAN);
        out.putLong(padded).put(json);
        while (out.hasRemaining()) {
            out.put((byte) ' ');
        }
        return out.array();
    }

    /** Writes the whole file to {@code ch}: header, then each tensor's bytes. */
    public void writeTo(WritableByteChannel ch) throws IOException {
        writeFully(ch, ByteBuffer.wrap(header()));
        for (Pending p : layout()) {
            // ByteBuffer views (no copy) hold at most 2^31 - 1 bytes: a large tensor goes in pieces
            MemorySegment data = p.data();
            for (long at = 0; at < data.byteSize(); at += CHUNK) {
                writeFully(ch, data.asSlice(at, Math.min(CHUNK, data.byteSize() - at)).asByteBuffer());
            }
        }
    }

    /**
     * Writes the file to {@code target} atomically (temporary file, fsync, rename, fsync of the folder).
     *
     * @throws SafetensorsException {@code IO} when it cannot; {@code target} is then as it was
     */
    public void write(Path target) {
        Path dir = target.toAbsolutePath().getParent();
        Path tmp = null;
        try {
            tmp = Files.createTempFile(dir, "." + target.getFileName() + ".", ".tmp");
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
                writeTo(ch);
                ch.force(true);
            }
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                throw new IOException("the file system of " + dir + " cannot rename atomically", e);
            }
            tmp = null;
            forceDirectory(dir);
        } catch (IOException e) {
            throw new SafetensorsException(SafetensorsException.Kind.IO, "cannot write " + target + ": " + e, e);
        } finally {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // the write already failed; that error is the one to report
                }
            }
        }
    }

    /** So that the rename itself survives a crash. Not every platform can open a folder; there it is skipped. */
    private static void forceDirectory(Path dir) {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException unsupported) {
            // best effort: the file's own bytes are already on disk
        }
    }

    private static void writeFully(WritableByteChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }
}
