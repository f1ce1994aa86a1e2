package dev.lantern.bench.profile;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.List;
import java.util.Map;

/**
 * Maps, lists, strings, numbers, booleans and null as indented JSON. Numbers keep 4 decimals
 * (a nanosecond in µs is 3), printed plainly (no exponent); NaN and infinities are null.
 */
final class JsonWriter {
    private JsonWriter() {}

    static String write(Object value) {
        StringBuilder b = new StringBuilder();
        write(b, value, "");
        return b.append('\n').toString();
    }

    private static void write(StringBuilder b, Object v, String indent) {
        switch (v) {
            case null -> b.append("null");
            case String s -> string(b, s);
            case Boolean x -> b.append(x);
            case Integer x -> b.append(x);
            case Long x -> b.append(x);
            case Number x -> number(b, x.doubleValue());
            case Map<?, ?> m -> {
                if (m.isEmpty()) {
                    b.append("{}");
                    return;
                }
                b.append("{\n");
                int i = 0;
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    b.append(indent).append("  ");
                    string(b, String.valueOf(e.getKey()));
                    b.append(": ");
                    write(b, e.getValue(), indent + "  ");
                    b.append(++i < m.size() ? ",\n" : "\n");
                }
                b.append(indent).append('}');
            }
            case List<?> l -> {
                if (l.isEmpty()) {
                    b.append("[]");
                    return;
                }
                b.append("[\n");
                for (int i = 0; i < l.size(); i++) {
                    b.append(indent).append("  ");
                    write(b, l.get(i), indent + "  ");
                    b.append(i + 1 < l.size() ? ",\n" : "\n");
                }
                b.append(indent).append(']');
            }
            default -> throw new IllegalArgumentException("not a JSON value: " + v.getClass());
        }
    }

    private static void number(StringBuilder b, double d) {
        if (!Double.isFinite(d)) {
            b.append("null");
            return;
        }
        b.append(BigDecimal.valueOf(d).setScale(4, RoundingMode.HALF_EVEN).stripTrailingZeros().toPlainString());
    }

    private static void string(StringBuilder b, String s) {
        dev.lantern.util.JsonStrings.quote(b, s);
    }
}
