package dev.lantern.weights;

import java.util.List;
import java.util.Map;

/**
 * A parsed JSON value. Objects keep their keys in document order and never hold a key twice;
 * numbers keep their literal text, so that a caller asking for an integer gets exactly the
 * integer written (no detour through a double: {@code 9007199254740993} stays exact, {@code 8.0}
 * and {@code 1e3} are not integers).
 */
public sealed interface JsonValue {
    /** An object; {@code members} is unmodifiable and in document order. */
    record JsonObject(Map<String, JsonValue> members) implements JsonValue {}

    record JsonArray(List<JsonValue> elements) implements JsonValue {}

    record JsonString(String value) implements JsonValue {}

    /** A number as written, e.g. {@code -12}, {@code 0.5}, {@code 1e3}. */
    record JsonNumber(String literal) implements JsonValue {
        /** Whether the literal is an integer ({@code -?digits}, no fraction, no exponent). */
        public boolean isInteger() {
            return literal.indexOf('.') < 0 && literal.indexOf('e') < 0 && literal.indexOf('E') < 0;
        }

        /** The integer written, or {@code null} when it is not an integer or does not fit a long. */
        public Long longValueOrNull() {
            if (!isInteger()) {
                return null;
            }
            try {
                return Long.parseLong(literal);
            } catch (NumberFormatException overflow) {
                return null;
            }
        }
    }

    record JsonBoolean(boolean value) implements JsonValue {}

    record JsonNull() implements JsonValue {}

    /** What the value is, for error messages: "object", "array", "string", "number", "boolean", "null". */
    default String kind() {
        return switch (this) {
            case JsonObject o -> "object";
            case JsonArray a -> "array";
            case JsonString s -> "string";
            case JsonNumber n -> "number";
            case JsonBoolean b -> "boolean";
            case JsonNull n -> "null";
        };
    }
}
