package dev.lantern.weights;

import dev.lantern.weights.SafetensorsException.Kind;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The validated header of a safetensors file. The layout is
 * {@code [u64 little-endian N][N bytes of JSON header][data]}; the header maps each tensor name
 * to {@code {"dtype", "shape", "data_offsets": [begin, end]}} (offsets into the data section) and
 * may hold {@code "__metadata__"}, an object of strings.
 *
 * <p>{@link #parse} checks everything before anything is exposed, and reads only the 8-byte
 * length and the header bytes (never the data pages): the length against the file and the 100 MB
 * limit first, then the JSON, read straight into entries by {@link HeaderReader} (strict JSON;
 * dtype, shape, offsets and size, with exact arithmetic, checked as each is read), then the layout: sorted by offsets, the tensors must tile the data section
 * exactly, from byte 0 to its last byte, with no overlap, no gap and nothing after. Tensors may
 * be listed in any order in the JSON (as the reference implementation allows); sizes claimed by
 * the header are only compared, never allocated.
 */
public record SafetensorsHeader(long headerBytes, Map<String, String> metadata, List<TensorInfo> tensors) {
    /** The reference implementation's limit on N. */
    public static final long MAX_HEADER_BYTES = 100_000_000L;
    static final String METADATA_KEY = "__metadata__";

    private static final ValueLayout.OfLong U64_LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    public SafetensorsHeader {
        metadata = Collections.unmodifiableMap(new LinkedHashMap<>(metadata));
        tensors = List.copyOf(tensors);
    }

    /** Where the data section starts in the file. */
    public long dataStart() {
        return 8 + headerBytes;
    }

    /**
     * Validates the safetensors bytes {@code file} (a whole file) and returns its header;
     * {@code source} names the file in errors.
     */
    public static SafetensorsHeader parse(MemorySegment file, String source) {
        long size = file.byteSize();
        if (size < 8) {
            throw fail(Kind.TRUNCATED, source, "file is " + size + " bytes, shorter than the 8-byte header length");
        }
        long n = file.get(U64_LE, 0);
        // unsigned: a length with the top bit set is over the limit too
        if (n < 0 || n > MAX_HEADER_BYTES) {
            throw fail(Kind.HEADER_TOO_LARGE, source, "header length " + Long.toUnsignedString(n)
                    + " bytes is over the limit of " + MAX_HEADER_BYTES);
        }
        if (n > size - 8) {
            throw fail(Kind.HEADER_PAST_END, source, "header length " + n + " bytes reaches past the end of the file ("
                    + size + " bytes)");
        }
        // the header is the document: copied to the heap once (array reads are what a cold JVM runs fastest)
        byte[] json = new byte[(int) n];
        MemorySegment.copy(file, ValueLayout.JAVA_BYTE, 8, json, 0, json.length);
        long dataBytes = size - 8 - n;
        HeaderReader.Result r = HeaderReader.read(json, dataBytes, source);
        List<TensorInfo> tensors = new ArrayList<>(r.tensors());
        checkLayout(tensors, dataBytes, source);
        return new SafetensorsHeader(n, r.metadata(), tensors);
    }

    /** Sorted by (begin, end), the tensors must cover [0, dataBytes) exactly once. */
    private static void checkLayout(List<TensorInfo> tensors, long dataBytes, String source) {
        tensors.sort(Comparator.comparingLong(TensorInfo::begin).thenComparingLong(TensorInfo::end)
                .thenComparing(TensorInfo::name));
        long expected = 0;
        TensorInfo previous = null;
        for (TensorInfo t : tensors) {
            if (t.begin() < expected) {
                throw fail(Kind.OVERLAP, source, "tensor " + JsonParser.quoteForMessage(t.name()) + " [" + t.begin() + ", "
                        + t.end() + ") overlaps tensor " + JsonParser.quoteForMessage(previous.name()) + " ["
                        + previous.begin() + ", " + previous.end() + ")");
            }
            if (t.begin() > expected) {
                throw fail(Kind.GAP, source, (t.begin() - expected) + " bytes [" + expected + ", " + t.begin()
                        + ") of the data belong to no tensor (before tensor " + JsonParser.quoteForMessage(t.name()) + ")");
            }
            expected = t.end();
            previous = t;
        }
        if (expected != dataBytes) {
            throw fail(Kind.TRAILING_BYTES, source, (dataBytes - expected) + " bytes after the last tensor (data is "
                    + dataBytes + " bytes, tensors end at " + expected + ")");
        }
    }

    static SafetensorsException fail(Kind kind, String source, String message) {
        return new SafetensorsException(kind, source + ": " + message);
    }
}
