package dev.lantern.weights;

import dev.lantern.weights.JsonCursor.Token;
import dev.lantern.weights.JsonValue.JsonNumber;
import dev.lantern.weights.SafetensorsException.Kind;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads a safetensors header's JSON straight into its entries with a {@link JsonCursor}: no JSON
 * tree, and each value is checked against the format as it is read, so a hostile header is
 * refused at its first wrong value and costs no more memory than the entries it really has (a
 * name, a shape of at most {@link #MAX_RANK} dims, two offsets). The layout across entries is
 * {@link SafetensorsHeader}'s to check.
 */
final class HeaderReader {
    /** NumPy's limit; real checkpoints stay under 8. */
    static final int MAX_RANK = 64;
    /** header object, entry object, shape array. */
    private static final int MAX_DEPTH = 3;

    private final JsonCursor c;
    private final long dataBytes;
    private final String source;
    private final long[] scratch = new long[MAX_RANK];

    private HeaderReader(byte[] json, long dataBytes, String source) {
        this.c = new JsonCursor(json, MAX_DEPTH);
        this.dataBytes = dataBytes;
        this.source = source;
    }

    record Result(Map<String, String> metadata, List<TensorInfo> tensors) {}

    /** The metadata and the entries (in header order) of {@code json}, for a data section of {@code dataBytes}. */
    static Result read(byte[] json, long dataBytes, String source) {
        HeaderReader r = new HeaderReader(json, dataBytes, source);
        try {
            return r.header();
        } catch (JsonException e) {
            throw fail(Kind.HEADER_NOT_JSON, source, "header is not valid JSON: " + e.getMessage());
        }
    }

    private Result header() {
        Token t = c.peek();
        if (t != Token.OBJECT) {
            throw fail(Kind.HEADER_NOT_OBJECT, source, "header is a JSON " + t.kind() + ", not an object");
        }
        c.beginObject();
        Map<String, String> metadata = Map.of();
        List<TensorInfo> tensors = new ArrayList<>();
        Set<String> names = new HashSet<>();
        while (c.hasNextMember()) {
            int at = c.position();
            String name = c.memberName();
            if (!names.add(name)) {
                throw fail(Kind.DUPLICATE_NAME, source, "header names " + JsonParser.quoteForMessage(name) + " twice (header byte " + at + ")");
            }
            if (name.equals(SafetensorsHeader.METADATA_KEY)) {
                metadata = metadata();
            } else {
                tensors.add(entry(name));
            }
        }
        c.finish();
        return new Result(metadata, tensors);
    }

    private Map<String, String> metadata() {
        String where = SafetensorsHeader.METADATA_KEY;
        Token t = c.peek();
        if (t == Token.NULL) {
            // how the reference (an optional map) reads "no metadata"
            c.nullValue();
            return Map.of();
        }
        if (t != Token.OBJECT) {
            throw fail(Kind.BAD_METADATA, source, where + " is a JSON " + t.kind() + ", not an object of strings");
        }
        c.beginObject();
        Map<String, String> m = new LinkedHashMap<>();
        while (c.hasNextMember()) {
            String key = c.memberName();
            if (c.peek() != Token.STRING) {
                throw fail(Kind.BAD_METADATA, source, where + " value of " + JsonParser.quoteForMessage(key) + " is a JSON "
                        + c.peek().kind() + ", not a string");
            }
            if (m.putIfAbsent(key, c.string()) != null) {
                throw fail(Kind.DUPLICATE_NAME, source, where + " names " + JsonParser.quoteForMessage(key) + " twice");
            }
        }
        return m;
    }

    private TensorInfo entry(String name) {
        String where = "tensor " + JsonParser.quoteForMessage(name);
        Token t = c.peek();
        if (t != Token.OBJECT) {
            throw fail(Kind.BAD_ENTRY, source, where + " is a JSON " + t.kind() + ", not an object");
        }
        c.beginObject();
        SafetensorsDType dtype = null;
        long[] shape = null;
        long[] offsets = null;
        while (c.hasNextMember()) {
            String key = c.memberName();
            switch (key) {
                case "dtype" -> {
                    once(dtype, key, where);
                    if (c.peek() != Token.STRING) {
                        throw fail(Kind.BAD_ENTRY, source, where + ": dtype is a JSON " + c.peek().kind() + ", not a string");
                    }
                    String text = c.string();
                    dtype = SafetensorsDType.parse(text);
                    if (dtype == null) {
                        throw fail(Kind.UNKNOWN_DTYPE, source, where + " has unknown dtype " + JsonParser.quoteForMessage(text));
                    }
                }
                case "shape" -> {
                    once(shape, key, where);
                    shape = integers(MAX_RANK, where + ": shape", "dimensions", Kind.BAD_SHAPE);
                }
                case "data_offsets" -> {
                    once(offsets, key, where);
                    offsets = integers(2, where + ": data_offsets", "entries", Kind.BAD_OFFSETS);
                    if (offsets.length != 2) {
                        throw fail(Kind.BAD_OFFSETS, source, where + ": data_offsets has " + offsets.length + " entries, not 2");
                    }
                }
                default -> throw fail(Kind.BAD_ENTRY, source, where + " has an unknown field " + JsonParser.quoteForMessage(key));
            }
        }
        if (dtype == null || shape == null || offsets == null) {
            throw fail(Kind.BAD_ENTRY, source, where + " has no " + (dtype == null ? "dtype" : shape == null ? "shape" : "data_offsets"));
        }
        long begin = offsets[0];
        long end = offsets[1];
        if (begin > end) {
            throw fail(Kind.BAD_OFFSETS, source, where + ": data_offsets [" + begin + ", " + end + "] begin after end");
        }
        long bytes = byteSize(shape, dtype, where);
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

    private void once(Object seen, String key, String where) {
        if (seen != null) {
            throw fail(Kind.DUPLICATE_NAME, source, where + " names " + key + " twice");
        }
    }

    /** An array of at most {@code max} non-negative integers that fit a long. */
    private long[] integers(int max, String where, String plural, Kind kind) {
        Token t = c.peek();
        if (t != Token.ARRAY) {
            throw fail(kind, source, where + " is a JSON " + t.kind() + ", not an array");
        }
        c.beginArray();
        int n = 0;
        while (c.hasNextElement()) {
            if (n == max) {
                throw fail(kind, source, where + " has more than " + max + " " + plural);
            }
            Token e = c.peek();
            if (e != Token.NUMBER) {
                throw fail(kind, source, where + " entry " + n + " is a JSON " + e.kind() + ", not an integer");
            }
            JsonNumber num = new JsonNumber(c.number());
            if (!num.isInteger()) {
                throw fail(kind, source, where + " entry " + n + " is " + shorten(num.literal()) + ", not an integer");
            }
            if (num.literal().startsWith("-")) {
                throw fail(kind, source, where + " entry " + n + " is negative (" + shorten(num.literal()) + ")");
            }
            Long x = num.longValueOrNull();
            if (x == null) {
                throw fail(Kind.SIZE_OVERFLOW, source, where + " entry " + n + " (" + shorten(num.literal())
                        + ") does not fit a signed 64-bit integer");
            }
            scratch[n++] = x;
        }
        return Arrays.copyOf(scratch, n);
    }

    /** numel × element size, exactly; a zero dimension makes an empty tensor whatever the others are. */
    private long byteSize(long[] shape, SafetensorsDType dtype, String where) {
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

    private static String shorten(String s) {
        return s.length() > 40 ? s.substring(0, 40) + "..." : s;
    }

    private static SafetensorsException fail(Kind kind, String source, String message) {
        return SafetensorsHeader.fail(kind, source, message);
    }
}
