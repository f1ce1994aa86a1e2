package dev.lantern.weights;

import dev.lantern.weights.JsonValue.JsonArray;
import dev.lantern.weights.JsonValue.JsonNumber;
import dev.lantern.weights.JsonValue.JsonObject;
import dev.lantern.weights.JsonValue.JsonString;
import dev.lantern.weights.SafetensorsException.Kind;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
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
 * limit first, then strict JSON, then each entry (dtype, shape, offsets, size with exact
 * arithmetic), then the layout: sorted by offsets, the tensors must tile the data section
 * exactly, from byte 0 to its last byte, with no overlap, no gap and nothing after. Tensors may
 * be listed in any order in the JSON (as the reference implementation allows); sizes claimed by
 * the header are only compared, never allocated.
 */
public record SafetensorsHeader(long headerBytes, Map<String, String> metadata, List<TensorInfo> tensors) {
    /** The reference implementation's limit on N. */
    public static final long MAX_HEADER_BYTES = 100_000_000L;
    /** The header is at most 3 deep ({tensor: {shape: [..]}}); a little slack, no more. */
    static final int MAX_JSON_DEPTH = 4;
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
        JsonValue root;
        try {
            root = JsonParser.parse(file, 8, 8 + n, MAX_JSON_DEPTH);
        } catch (JsonException e) {
            if (e.duplicateKey() != null) {
                throw fail(Kind.DUPLICATE_NAME, source, "header names " + JsonParser.quoteForMessage(e.duplicateKey())
                        + " twice (header byte " + e.offset() + ")");
            }
            throw fail(Kind.HEADER_NOT_JSON, source, "header is not valid JSON: " + e.getMessage());
        }
        if (!(root instanceof JsonObject obj)) {
            throw fail(Kind.HEADER_NOT_OBJECT, source, "header is a JSON " + root.kind() + ", not an object");
        }
        long dataBytes = size - 8 - n;
        Map<String, String> metadata = Map.of();
        List<TensorInfo> tensors = new ArrayList<>(obj.members().size());
        for (Map.Entry<String, JsonValue> e : obj.members().entrySet()) {
            if (e.getKey().equals(METADATA_KEY)) {
                // null is how the reference (an optional map) reads "no metadata"
                metadata = e.getValue() instanceof JsonValue.JsonNull ? Map.of() : metadata(e.getValue(), source);
            } else {
                tensors.add(entry(e.getKey(), e.getValue(), dataBytes, source));
            }
        }
        checkLayout(tensors, dataBytes, source);
        return new SafetensorsHeader(n, metadata, tensors);
    }

    private static Map<String, String> metadata(JsonValue v, String source) {
        if (!(v instanceof JsonObject o)) {
            throw fail(Kind.BAD_METADATA, source, METADATA_KEY + " is a JSON " + v.kind() + ", not an object of strings");
        }
        Map<String, String> m = new LinkedHashMap<>();
        for (Map.Entry<String, JsonValue> e : o.members().entrySet()) {
            if (!(e.getValue() instanceof JsonString s)) {
                throw fail(Kind.BAD_METADATA, source, METADATA_KEY + " value of " + JsonParser.quoteForMessage(e.getKey())
                        + " is a JSON " + e.getValue().kind() + ", not a string");
            }
            m.put(e.getKey(), s.value());
        }
        return m;
    }

    private static TensorInfo entry(String name, JsonValue v, long dataBytes, String source) {
        String where = "tensor " + JsonParser.quoteForMessage(name);
        if (!(v instanceof JsonObject o)) {
            throw fail(Kind.BAD_ENTRY, source, where + " is a JSON " + v.kind() + ", not an object");
        }
        for (String key : o.members().keySet()) {
            if (!key.equals("dtype") && !key.equals("shape") && !key.equals("data_offsets")) {
                throw fail(Kind.BAD_ENTRY, source, where + " has an unknown field " + JsonParser.quoteForMessage(key));
            }
        }
        JsonValue dtypeValue = field(o, "dtype", where, source);
        if (!(dtypeValue instanceof JsonString dtypeText)) {
            throw fail(Kind.BAD_ENTRY, source, where + ": dtype is a JSON " + dtypeValue.kind() + ", not a string");
        }
        SafetensorsDType dtype = SafetensorsDType.parse(dtypeText.value());
        if (dtype == null) {
            throw fail(Kind.UNKNOWN_DTYPE, source, where + " has unknown dtype " + JsonParser.quoteForMessage(dtypeText.value()));
        }
        long[] shape = integers(field(o, "shape", where, source), -1, where + ": shape", Kind.BAD_SHAPE, source);
        long[] offsets = integers(field(o, "data_offsets", where, source), 2, where + ": data_offsets", Kind.BAD_OFFSETS, source);
        long begin = offsets[0];
        long end = offsets[1];
        if (begin > end) {
            throw fail(Kind.BAD_OFFSETS, source, where + ": data_offsets [" + begin + ", " + end + "] begin after end");
        }
        long bytes = byteSize(shape, dtype, where, source);
        if (end > dataBytes) {
            throw fail(Kind.OFFSETS_PAST_END, source, where + ": data_offsets [" + begin + ", " + end
                    + "] reach past the end of the data (" + dataBytes + " bytes)");
        }
        if (end - begin != bytes) {
            throw fail(Kind.SIZE_MISMATCH, source, where + ": data_offsets [" + begin + ", " + end + "] hold " + (end - begin)
                    + " bytes, but " + dtype + " " + Arrays.toString(shape) + " needs " + bytes);
        }
        return new TensorInfo(name, dtype, shape, begin, end);
    }

    private static JsonValue field(JsonObject o, String key, String where, String source) {
        JsonValue v = o.members().get(key);
        if (v == null) {
            throw fail(Kind.BAD_ENTRY, source, where + " has no " + key);
        }
        return v;
    }

    /** An array of non-negative integers that fit a long; {@code count} -1 for any length. */
    private static long[] integers(JsonValue v, int count, String where, Kind kind, String source) {
        if (!(v instanceof JsonArray a)) {
            throw fail(kind, source, where + " is a JSON " + v.kind() + ", not an array");
        }
        if (count >= 0 && a.elements().size() != count) {
            throw fail(kind, source, where + " has " + a.elements().size() + " entries, not " + count);
        }
        long[] out = new long[a.elements().size()];
        for (int i = 0; i < out.length; i++) {
            JsonValue e = a.elements().get(i);
            if (!(e instanceof JsonNumber num) || !num.isInteger()) {
                throw fail(kind, source, where + " entry " + i + " is " + describe(e) + ", not an integer");
            }
            if (num.literal().startsWith("-")) {
                throw fail(kind, source, where + " entry " + i + " is negative (" + num.literal() + ")");
            }
            Long x = num.longValueOrNull();
            if (x == null) {
                throw fail(Kind.SIZE_OVERFLOW, source, where + " entry " + i + " (" + shorten(num.literal())
                        + ") does not fit a signed 64-bit integer");
            }
            out[i] = x;
        }
        return out;
    }

    /** numel × element size, exactly; a zero dimension makes an empty tensor whatever the others are. */
    private static long byteSize(long[] shape, SafetensorsDType dtype, String where, String source) {
        for (long d : shape) {
            if (d == 0) {
                return 0;
            }
        }
        try {
            long numel = 1;
            for (long d : shape) {
                numel = Math.multiplyExact(numel, d);
            }
            return Math.multiplyExact(numel, dtype.bytes());
        } catch (ArithmeticException overflow) {
            throw fail(Kind.SIZE_OVERFLOW, source, where + ": " + dtype + " " + Arrays.toString(shape)
                    + " has more bytes than a signed 64-bit integer holds");
        }
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

    private static String describe(JsonValue v) {
        return v instanceof JsonNumber n ? shorten(n.literal()) : "a JSON " + v.kind();
    }

    private static String shorten(String s) {
        return s.length() > 40 ? s.substring(0, 40) + "..." : s;
    }

    static SafetensorsException fail(Kind kind, String source, String message) {
        return new SafetensorsException(kind, source + ": " + message);
    }
}
