package dev.lantern.tensor;

import dev.lantern.tensor.NpyException.Kind;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The header of a {@code .npy} file: a Python dict literal such as
 * {@code {'descr': '<f4', 'fortran_order': False, 'shape': (3, 37, 50), }}, which NumPy reads
 * with {@code ast.literal_eval}. This parses the subset of Python literals that can appear in
 * one (strings, integers, {@code True}/{@code False}/{@code None}, tuples, lists, dicts), so that
 * a structured dtype's list of tuples is recognised and refused by name rather than as a syntax
 * error, and then checks NumPy's own rules: exactly the three keys, a tuple of integers as the
 * shape, a bool as the order.
 *
 * @param descr   the dtype descriptor, e.g. {@code <f4}
 * @param fortran {@code fortran_order}
 * @param shape   the dimensions, each in [0, 2^31-1]
 */
record NpyHeader(String descr, boolean fortran, int[] shape) {
    /** Nesting deeper than this is refused before it can exhaust the stack. */
    private static final int MAX_DEPTH = 32;

    /** A Python tuple (a list is a plain {@link List}): the shape must be a tuple, as NumPy requires. */
    private record Tuple(List<Object> items) {}

    static NpyHeader parse(String text, String source) {
        Parser p = new Parser(text, source);
        p.skipSpace();
        Object v = p.value(0);
        p.skipSpace();
        if (p.pos < text.length()) {
            throw p.fail("unexpected '" + text.charAt(p.pos) + "' after the dict");
        }
        if (!(v instanceof Map<?, ?> d)) {
            throw new NpyException(Kind.BAD_HEADER, source + ": the header is not a dict: " + excerpt(text));
        }
        if (!d.keySet().equals(java.util.Set.of("descr", "fortran_order", "shape"))) {
            throw new NpyException(Kind.BAD_HEADER, source + ": the header's keys are " + d.keySet()
                    + ", expected exactly descr, fortran_order and shape");
        }
        if (!(d.get("descr") instanceof String descr)) {
            throw new NpyException(Kind.UNSUPPORTED_DTYPE, source + ": descr " + excerpt(String.valueOf(d.get("descr")))
                    + " is a structured dtype; only plain numeric dtypes are read");
        }
        if (!(d.get("fortran_order") instanceof Boolean fortran)) {
            throw new NpyException(Kind.BAD_HEADER, source + ": fortran_order is " + d.get("fortran_order") + ", not True or False");
        }
        if (!(d.get("shape") instanceof Tuple t)) {
            throw new NpyException(Kind.BAD_SHAPE, source + ": shape " + excerpt(String.valueOf(d.get("shape"))) + " is not a tuple");
        }
        int[] shape = new int[t.items().size()];
        for (int i = 0; i < shape.length; i++) {
            if (!(t.items().get(i) instanceof java.math.BigInteger n)) {
                throw new NpyException(Kind.BAD_SHAPE, source + ": dimension " + i + " of the shape is "
                        + excerpt(String.valueOf(t.items().get(i))) + ", not an integer");
            }
            if (n.signum() < 0) {
                throw new NpyException(Kind.BAD_SHAPE, source + ": dimension " + i + " of the shape is negative (" + n + ")");
            }
            if (n.bitLength() > 31) {
                throw new NpyException(Kind.BAD_SHAPE, source + ": dimension " + i + " of the shape (" + excerpt(n.toString())
                        + ") is over 2^31-1");
            }
            shape[i] = n.intValueExact();
        }
        return new NpyHeader(descr, fortran, shape);
    }

    /** {@code s} cut to a length that fits on one line of an error message. */
    static String excerpt(String s) {
        String one = s.replaceAll("\\s+", " ").strip();
        return one.length() <= 60 ? one : one.substring(0, 57) + "...";
    }

    /** Recursive descent over the literal; {@code pos} is the next unread character. */
    private static final class Parser {
        private final String s;
        private final String source;
        int pos;

        Parser(String s, String source) {
            this.s = s;
            this.source = source;
        }

        NpyException fail(String what) {
            return new NpyException(Kind.BAD_HEADER, source + ": the header is not a Python dict literal: " + what
                    + " at character " + pos + " of " + excerpt(s));
        }

        void skipSpace() {
            while (pos < s.length() && (s.charAt(pos) == ' ' || s.charAt(pos) == '\t' || s.charAt(pos) == '\n' || s.charAt(pos) == '\r')) {
                pos++;
            }
        }

        Object value(int depth) {
            if (depth > MAX_DEPTH) {
                throw fail("nesting deeper than " + MAX_DEPTH);
            }
            skipSpace();
            if (pos >= s.length()) {
                throw fail("it ends where a value should start");
            }
            char c = s.charAt(pos);
            return switch (c) {
                case '\'', '"' -> string(c);
                case '{' -> dict(depth);
                case '(' -> tupleOrGroup(depth);
                case '[' -> new ArrayList<>(items(']', depth));
                default -> c == '-' || c == '+' || (c >= '0' && c <= '9') ? integer() : word();
            };
        }

        private String string(char quote) {
            StringBuilder b = new StringBuilder();
            pos++;
            while (pos < s.length() && s.charAt(pos) != quote) {
                char c = s.charAt(pos++);
                if (c == '\n') {
                    throw fail("a newline inside a string");
                }
                if (c == '\\') {
                    if (pos >= s.length()) {
                        break;
                    }
                    char e = s.charAt(pos++);
                    b.append(switch (e) {
                        case 'n' -> '\n';
                        case 't' -> '\t';
                        case '\\', '\'', '"' -> e;
                        default -> throw fail("the escape \\" + e + " (not read here)");
                    });
                } else {
                    b.append(c);
                }
            }
            if (pos >= s.length()) {
                throw fail("an unterminated string");
            }
            pos++;
            return b.toString();
        }

        private java.math.BigInteger integer() {
            int start = pos;
            if (s.charAt(pos) == '-' || s.charAt(pos) == '+') {
                pos++;
            }
            int digits = pos;
            while (pos < s.length() && s.charAt(pos) >= '0' && s.charAt(pos) <= '9') {
                pos++;
            }
            if (pos == digits) {
                throw fail("a sign without digits");
            }
            if (pos - digits > 40) {
                throw fail("an integer of " + (pos - digits) + " digits");
            }
            return new java.math.BigInteger(s.substring(start, pos));
        }

        private Object word() {
            int start = pos;
            while (pos < s.length() && Character.isLetter(s.charAt(pos))) {
                pos++;
            }
            return switch (s.substring(start, pos)) {
                case "True" -> Boolean.TRUE;
                case "False" -> Boolean.FALSE;
                case "None" -> NONE;
                default -> {
                    pos = start;
                    throw fail("unexpected '" + s.charAt(pos) + "'");
                }
            };
        }

        private Object tupleOrGroup(int depth) {
            int open = pos;
            List<Object> items = items(')', depth);
            // "(5)" is 5 in Python, "(5,)" a tuple: look at the character before the ')'
            int close = pos - 1;
            int k = close - 1;
            while (k > open && Character.isWhitespace(s.charAt(k))) {
                k--;
            }
            if (items.size() == 1 && s.charAt(k) != ',') {
                return items.getFirst();
            }
            return new Tuple(items);
        }

        /** Comma-separated values up to {@code close}, a trailing comma allowed; leaves pos after it. */
        private List<Object> items(char close, int depth) {
            List<Object> out = new ArrayList<>();
            pos++;
            while (true) {
                skipSpace();
                if (pos < s.length() && s.charAt(pos) == close) {
                    pos++;
                    return out;
                }
                out.add(value(depth + 1));
                skipSpace();
                if (pos < s.length() && s.charAt(pos) == ',') {
                    pos++;
                } else if (pos >= s.length() || s.charAt(pos) != close) {
                    throw fail("expected ',' or '" + close + "'");
                }
            }
        }

        private Map<Object, Object> dict(int depth) {
            Map<Object, Object> out = new LinkedHashMap<>();
            pos++;
            while (true) {
                skipSpace();
                if (pos < s.length() && s.charAt(pos) == '}') {
                    pos++;
                    return out;
                }
                Object key = value(depth + 1);
                if (!(key instanceof String k)) {
                    throw fail("a key that is not a string");
                }
                skipSpace();
                if (pos >= s.length() || s.charAt(pos) != ':') {
                    throw fail("expected ':'");
                }
                pos++;
                if (out.put(k, value(depth + 1)) != null) {
                    throw fail("the key '" + k + "' twice");
                }
                skipSpace();
                if (pos < s.length() && s.charAt(pos) == ',') {
                    pos++;
                } else if (pos >= s.length() || s.charAt(pos) != '}') {
                    throw fail("expected ',' or '}'");
                }
            }
        }
    }

    /** Python's None: a value that is none of the types the header's fields need. */
    private static final Object NONE = new Object() {
        @Override
        public String toString() {
            return "None";
        }
    };

    @Override
    public boolean equals(Object o) {
        return o instanceof NpyHeader h && h.descr.equals(descr) && h.fortran == fortran && java.util.Arrays.equals(h.shape, shape);
    }

    @Override
    public int hashCode() {
        return descr.hashCode() * 31 + java.util.Arrays.hashCode(shape);
    }

    @Override
    public String toString() {
        return "NpyHeader[descr=" + descr + ", fortran=" + fortran + ", shape=" + java.util.Arrays.toString(shape) + "]";
    }
}
