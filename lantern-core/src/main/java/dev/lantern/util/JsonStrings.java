package dev.lantern.util;

/**
 * String literals as JSON writes them, which is also how the IR text format writes its string
 * attributes (IrParser reads back exactly these escapes): {@code a"b\c<TAB>} becomes
 * {@code "a\"b\\c\t"}; other control characters become {@code \}{@code u00XX}, everything else
 * stays as it is (no escaping of non-ASCII).
 */
public final class JsonStrings {
    private JsonStrings() {}

    /** {@code s} quoted and escaped. */
    public static String quote(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2);
        quote(b, s);
        return b.toString();
    }

    /** Appends {@code s} quoted and escaped to {@code b}. */
    public static void quote(StringBuilder b, String s) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        b.append('"');
    }
}
