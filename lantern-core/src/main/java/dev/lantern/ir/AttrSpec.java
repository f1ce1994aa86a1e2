package dev.lantern.ir;

/**
 * One attribute an op accepts. Written compactly on the op's spec as {@code "eps:f=1e-5"}
 * (name, type letter, default) or {@code "perm:ints!"} (required); a string attribute with a closed
 * set of values lists them: {@code "approximate:s(none|tanh)=tanh"}.
 * Types: {@code i} integer, {@code f} float, {@code b} boolean, {@code s} string, {@code ints} integer list.
 */
public record AttrSpec(String name, String type, boolean required, Object dflt, java.util.List<String> choices) {
    public AttrSpec {
        choices = java.util.List.copyOf(choices);
    }

    static AttrSpec parse(String s) {
        boolean required = s.endsWith("!");
        if (required) {
            s = s.substring(0, s.length() - 1);
        }
        int colon = s.indexOf(':');
        int eq = s.indexOf('=');
        String name = s.substring(0, colon);
        String type = eq < 0 ? s.substring(colon + 1) : s.substring(colon + 1, eq);
        java.util.List<String> choices = java.util.List.of();
        if (type.endsWith(")")) {
            choices = java.util.List.of(type.substring(type.indexOf('(') + 1, type.length() - 1).split("\\|"));
            type = type.substring(0, type.indexOf('('));
        }
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
        return new AttrSpec(name, type, required, dflt, choices);
    }

    boolean accepts(Object v) {
        return switch (type) {
            case "i" -> v instanceof Long;
            case "f" -> v instanceof Double || v instanceof Long;
            case "b" -> v instanceof Boolean;
            case "s" -> v instanceof String str && (choices.isEmpty() || choices.contains(str));
            case "ints" -> v instanceof java.util.List;
            default -> false;
        };
    }

    String typeName() {
        return switch (type) {
            case "i" -> "an integer";
            case "f" -> "a number";
            case "b" -> "true or false";
            case "s" -> choices.isEmpty() ? "a string" : "one of " + String.join(", ", choices.stream().map(c -> '"' + c + '"').toList());
            default -> "an integer list";
        };
    }
}
