package dev.lantern.bench.report;

/** Text escaped for HTML element content and attribute values. */
final class Html {
    private Html() {}

    static String esc(String s) {
        if (s == null) {
            return "";
        }
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '<' -> b.append("&lt;");
                case '>' -> b.append("&gt;");
                case '&' -> b.append("&amp;");
                case '"' -> b.append("&quot;");
                case '\'' -> b.append("&#39;");
                default -> b.append(c);
            }
        }
        return b.toString();
    }

    /** An id for an element from any text: letters, digits and '-' only. */
    static String id(String prefix, String s) {
        return prefix + "-" + s.replaceAll("[^A-Za-z0-9]+", "-").replaceAll("^-|-$", "");
    }
}
