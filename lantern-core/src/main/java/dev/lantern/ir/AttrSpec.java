package dev.lantern.ir;

/**
 * One attribute an op accepts. Written compactly on the op's spec as {@code "eps:f=1e-5"}
 * (name, type letter, default) or {@code "perm:ints!"} (required).
 * Types: {@code i} integer, {@code f} float, {@code b} boolean, {@code s} string, {@code ints} integer list.
 */
public record AttrSpec(String name, String type, boolean required, Object dflt) {
    static AttrSpec parse(String s) {
        boolean required = s.endsWith("!");
        if (required) {
            s = s.substring(0, s.length() - 1);
        }
        int colon = s.indexOf(':');
        int eq = s.indexOf('=');
        String name = s.substring(0, colon);
        String type = eq < 0 ? s.substring(colon + 1) : s.substring(colon + 1, eq);
        Object dflt = null;
        if (eq >= 0) {
            String v = s.substring(eq + 1);
            dflt = switch (type) {
                case "i" -> Long.parseLong(v);
                case "f" -> Double.parseDouble(v);
                case "b" -> Boolean.parseBoolean(v);
                default -> v;
            };
        }
        return new AttrSpec(name, type, required, dflt);
    }

    boolean accepts(Object v) {
        return switch (type) {
            case "i" -> v instanceof Long;
            case "f" -> v instanceof Double || v instanceof Long;
            case "b" -> v instanceof Boolean;
            case "s" -> v instanceof String;
            case "ints" -> v instanceof java.util.List;
            default -> false;
        };
    }

    String typeName() {
        return switch (type) {
            case "i" -> "an integer";
            case "f" -> "a number";
            case "b" -> "true or false";
            case "s" -> "a string";
            default -> "an integer list";
        };
    }
}
