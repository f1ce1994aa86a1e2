package dev.lantern.cli;

import dev.lantern.util.JsonStrings;

import java.util.List;
import java.util.Map;

/** A minimal JSON writer for the CLI's {@code --json} output: maps, lists, strings, numbers, booleans. */
final class Json {
    private Json() {}

    static String write(Object v) {
        StringBuilder b = new StringBuilder();
        write(b, v);
        return b.toString();
    }

    private static void write(StringBuilder b, Object v) {
        switch (v) {
            case null -> b.append("null");
            case Map<?, ?> m -> {
                b.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    if (!first) {
                        b.append(", ");
                    }
                    first = false;
                    JsonStrings.quote(b, e.getKey().toString());
                    b.append(": ");
                    write(b, e.getValue());
                }
                b.append('}');
            }
            case List<?> l -> {
                b.append('[');
                for (int i = 0; i < l.size(); i++) {
                    if (i > 0) {
                        b.append(", ");
                    }
                    write(b, l.get(i));
                }
                b.append(']');
            }
            case Double d when d.isNaN() || d.isInfinite() -> b.append("null");
            case Float f when f.isNaN() || f.isInfinite() -> b.append("null");
            case Number n -> b.append(n);
            case Boolean x -> b.append(x);
            default -> JsonStrings.quote(b, v.toString());
        }
    }
}
