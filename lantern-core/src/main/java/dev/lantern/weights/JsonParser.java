package dev.lantern.weights;

import dev.lantern.util.JsonStrings;
import dev.lantern.weights.JsonValue.JsonArray;
import dev.lantern.weights.JsonValue.JsonBoolean;
import dev.lantern.weights.JsonValue.JsonNull;
import dev.lantern.weights.JsonValue.JsonNumber;
import dev.lantern.weights.JsonValue.JsonObject;
import dev.lantern.weights.JsonValue.JsonString;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Strict JSON (the rules of {@link JsonCursor}) into a {@link JsonValue} tree, for small documents
 * from outside: an index file, a {@code config.json}. A key twice in one object is refused
 * ({@link JsonException#duplicateKey()} names it). A tree costs a few times its document in
 * memory; a format that can be large and hostile (a safetensors header) reads with the cursor.
 */
public final class JsonParser {
    private JsonParser() {}

    /** The one JSON value in {@code bytes}. */
    public static JsonValue parse(byte[] bytes, int maxDepth) {
        JsonCursor c = new JsonCursor(bytes, maxDepth);
        JsonValue v = value(c);
        c.finish();
        return v;
    }

    /** The one JSON value in {@code bytes[start, end)}, copied to the heap first; offsets count from {@code start}. */
    public static JsonValue parse(MemorySegment bytes, long start, long end, int maxDepth) {
        if (start < 0 || end > bytes.byteSize() || start > end || end - start > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("range [" + start + ", " + end + ") outside " + bytes.byteSize() + " bytes");
        }
        byte[] copy = new byte[(int) (end - start)];
        MemorySegment.copy(bytes, ValueLayout.JAVA_BYTE, start, copy, 0, copy.length);
        return parse(copy, maxDepth);
    }

    private static JsonValue value(JsonCursor c) {
        return switch (c.peek()) {
            case OBJECT -> {
                c.beginObject();
                Map<String, JsonValue> members = new LinkedHashMap<>();
                while (c.hasNextMember()) {
                    int at = c.position();
                    String key = c.memberName();
                    if (members.putIfAbsent(key, value(c)) != null) {
                        throw new JsonException(at, "duplicate key " + quoteForMessage(key), key);
                    }
                }
                yield new JsonObject(Collections.unmodifiableMap(members));
            }
            case ARRAY -> {
                c.beginArray();
                List<JsonValue> elements = new ArrayList<>();
                while (c.hasNextElement()) {
                    elements.add(value(c));
                }
                yield new JsonArray(Collections.unmodifiableList(elements));
            }
            case STRING -> new JsonString(c.string());
            case NUMBER -> new JsonNumber(c.number());
            case TRUE, FALSE -> new JsonBoolean(c.bool());
            case NULL -> {
                c.nullValue();
                yield new JsonNull();
            }
        };
    }

    /** {@code s} quoted for a one-line message, cut to 80 characters. */
    static String quoteForMessage(String s) {
        return JsonStrings.quote(s.length() > 80 ? s.substring(0, 80) + "..." : s);
    }
}
