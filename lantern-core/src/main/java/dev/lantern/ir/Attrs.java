package dev.lantern.ir;

import dev.lantern.util.JsonStrings;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Attributes of a node: a sorted map from name to a value that is a {@code Long}, {@code Double},
 * {@code Boolean}, {@code String} or {@code List<Long>}. Sorted so that printing is canonical.
 */
public record Attrs(SortedMap<String, Object> values) {
    public static final Attrs EMPTY = new Attrs(new TreeMap<>());

    public Attrs {
        TreeMap<String, Object> copy = new TreeMap<>();
        for (Map.Entry<String, Object> e : values.entrySet()) {
            copy.put(e.getKey(), check(e.getKey(), e.getValue()));
        }
        values = Collections.unmodifiableSortedMap(copy);
    }

    private static Object check(String key, Object v) {
        return switch (v) {
            case Integer i -> (long) i;
            case Long l -> l;
            case Float f -> (double) f;
            case Double d -> d;
            case Boolean b -> b;
            case String s -> s;
            case int[] a -> {
                List<Long> l = new ArrayList<>();
                for (int x : a) {
                    l.add((long) x);
                }
                yield List.copyOf(l);
            }
            case List<?> list -> {
                List<Long> l = new ArrayList<>();
                for (Object x : list) {
                    if (!(x instanceof Number n)) {
                        throw new IllegalArgumentException("attribute " + key + ": list of non-integers " + list);
                    }
                    l.add(n.longValue());
                }
                yield List.copyOf(l);
            }
            default -> throw new IllegalArgumentException("attribute " + key + ": unsupported value " + v);
        };
    }

    /** Attributes from alternating keys and values: {@code Attrs.of("eps", 1e-5, "causal", true)}. */
    public static Attrs of(Object... kv) {
        if (kv.length % 2 != 0) {
            throw new IllegalArgumentException("Attrs.of needs key/value pairs");
        }
        TreeMap<String, Object> m = new TreeMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return new Attrs(m);
    }

    public Attrs with(String key, Object value) {
        TreeMap<String, Object> m = new TreeMap<>(values);
        m.put(key, value);
        return new Attrs(m);
    }

    public Attrs without(String key) {
        TreeMap<String, Object> m = new TreeMap<>(values);
        m.remove(key);
        return new Attrs(m);
    }

    public boolean has(String key) {
        return values.containsKey(key);
    }

    public boolean isEmpty() {
        return values.isEmpty();
    }

    public long getLong(String key, long dflt) {
        return values.get(key) instanceof Number n ? n.longValue() : dflt;
    }

    /** An integer attribute that must fit in an int (an axis, a bound): a wider value is a {@link TypeException}, never truncated. */
    public int getInt(String key, int dflt) {
        return toInt(key, getLong(key, dflt));
    }

    private static int toInt(String key, long v) {
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw new TypeException("attribute '" + key + "' = " + v + " is out of the int range");
        }
        return (int) v;
    }

    public double getDouble(String key, double dflt) {
        return values.get(key) instanceof Number n ? n.doubleValue() : dflt;
    }

    public boolean getBool(String key, boolean dflt) {
        return values.get(key) instanceof Boolean b ? b : dflt;
    }

    public String getString(String key, String dflt) {
        return values.get(key) instanceof String s ? s : dflt;
    }

    /** An integer-list attribute as an int array, or {@code null} when absent. */
    public int[] getInts(String key) {
        if (!(values.get(key) instanceof List<?> l)) {
            return null;
        }
        int[] r = new int[l.size()];
        for (int i = 0; i < r.length; i++) {
            r[i] = toInt(key, (Long) l.get(i));
        }
        return r;
    }

    /** "{a=1, b=true}" as in the text format, or "" when empty. */
    @Override
    public String toString() {
        if (values.isEmpty()) {
            return "";
        }
        StringBuilder b = new StringBuilder("{");
        boolean first = true;
        for (Map.Entry<String, Object> e : values.entrySet()) {
            if (!first) {
                b.append(", ");
            }
            first = false;
            b.append(e.getKey()).append('=').append(format(e.getValue()));
        }
        return b.append('}').toString();
    }

    static String format(Object v) {
        return switch (v) {
            case Double d when d.isNaN() -> "nan";
            case Double d when d.isInfinite() -> d > 0 ? "inf" : "-inf";
            case Double d -> d.toString();
            case String s -> JsonStrings.quote(s);
            case List<?> l -> {
                StringBuilder b = new StringBuilder("[");
                for (int i = 0; i < l.size(); i++) {
                    if (i > 0) {
                        b.append(',');
                    }
                    b.append(l.get(i));
                }
                yield b.append(']').toString();
            }
            default -> v.toString();
        };
    }
}
