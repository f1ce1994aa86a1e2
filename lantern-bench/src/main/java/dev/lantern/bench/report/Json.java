package dev.lantern.bench.report;

import dev.lantern.weights.JsonValue;
import dev.lantern.weights.JsonValue.JsonArray;
import dev.lantern.weights.JsonValue.JsonNumber;
import dev.lantern.weights.JsonValue.JsonObject;
import dev.lantern.weights.JsonValue.JsonString;
import java.util.List;
import java.util.Map;

/** Tolerant reads of a parsed results file: a missing or mistyped field is null or NaN, never an exception. */
final class Json {
    private Json() {}

    static Map<String, JsonValue> obj(JsonValue v) {
        return v instanceof JsonObject o ? o.members() : Map.of();
    }

    static List<JsonValue> arr(JsonValue v) {
        return v instanceof JsonArray a ? a.elements() : List.of();
    }

    static String str(Map<String, JsonValue> m, String key) {
        JsonValue v = m.get(key);
        return switch (v) {
            case JsonString s -> s.value();
            case JsonNumber n -> n.literal();
            case null, default -> null;
        };
    }

    static double num(Map<String, JsonValue> m, String key) {
        return m.get(key) instanceof JsonNumber n ? parse(n.literal()) : Double.NaN;
    }

    private static double parse(String literal) {
        try {
            return Double.parseDouble(literal);
        } catch (NumberFormatException e) {
            return Double.NaN;
        }
    }

    /** Whether {@code v} is a non-empty array whose objects carry every one of {@code keys} (at least one does). */
    static boolean arrayOf(JsonValue v, String... keys) {
        for (JsonValue e : arr(v)) {
            Map<String, JsonValue> m = obj(e);
            boolean all = true;
            for (String k : keys) {
                all &= m.containsKey(k);
            }
            if (all) {
                return true;
            }
        }
        return false;
    }
}
