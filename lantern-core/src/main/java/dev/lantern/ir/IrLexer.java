package dev.lantern.ir;

/**
 * The tokens of the IR text format ({@link IrParser}'s grammar reads through it): values
 * ({@code %name}), identifiers, integers, numbers, quoted strings with escapes, keywords and
 * punctuation, with {@code #} comments and whitespace skipped, and the line:column of every
 * error ({@link ParseException}).
 */
abstract class IrLexer {
    final String src;
    int pos;
    int line = 1;
    int col = 1;

    IrLexer(String src) {
        this.src = src;
    }

    final String value() {
        skip();
        if (peek() != '%') {
            throw error("expected a value (%name)");
        }
        advance(1);
        int start = pos;
        while (pos < src.length() && isNameChar(src.charAt(pos))) {
            advance(1);
        }
        if (start == pos) {
            throw error("expected a value name after '%'");
        }
        return src.substring(start, pos);
    }

    final String ident(String what) {
        skip();
        int start = pos;
        while (pos < src.length() && (Character.isLetterOrDigit(src.charAt(pos)) || src.charAt(pos) == '_')) {
            advance(1);
        }
        if (start == pos || !Character.isLetter(src.charAt(start)) && src.charAt(start) != '_') {
            pos = start;
            throw error("expected " + what);
        }
        return src.substring(start, pos);
    }

    final long integer() {
        int l = line;
        int c = col;
        int start = pos;
        if (peek() == '-') {
            advance(1);
        }
        while (pos < src.length() && Character.isDigit(src.charAt(pos))) {
            advance(1);
        }
        String t = src.substring(start, pos);
        try {
            return Long.parseLong(t);
        } catch (NumberFormatException e) {
            throw new ParseException(l, c, "expected an integer, found " + describe(start));
        }
    }

    final Object number() {
        int l = line;
        int c = col;
        int start = pos;
        while (pos < src.length() && "+-.0123456789eE".indexOf(src.charAt(pos)) >= 0) {
            advance(1);
        }
        String t = src.substring(start, pos);
        try {
            if (t.contains(".") || t.contains("e") || t.contains("E")) {
                return Double.parseDouble(t);
            }
            return Long.parseLong(t);
        } catch (NumberFormatException e) {
            throw new ParseException(l, c, "expected a number, found " + (t.isEmpty() ? describe(start) : "'" + t + "'"));
        }
    }

    final String string() {
        skip();
        int sl = line;
        int sc = col;
        expect('"');
        StringBuilder b = new StringBuilder();
        while (true) {
            if (pos >= src.length() || src.charAt(pos) == '\n') {
                throw new ParseException(sl, sc, "unterminated string");
            }
            char ch = src.charAt(pos);
            advance(1);
            if (ch == '"') {
                return b.toString();
            }
            if (ch == '\\') {
                if (pos >= src.length()) {
                    throw error("unterminated string");
                }
                char e = src.charAt(pos);
                advance(1);
                switch (e) {
                    case 'n' -> b.append('\n');
                    case 't' -> b.append('\t');
                    case '"' -> b.append('"');
                    case '\\' -> b.append('\\');
                    case 'u' -> {
                        if (pos + 4 > src.length()) {
                            throw error("bad \\u escape");
                        }
                        try {
                            b.append((char) Integer.parseInt(src.substring(pos, pos + 4), 16));
                        } catch (NumberFormatException ex) {
                            throw error("bad \\u escape");
                        }
                        advance(4);
                    }
                    default -> throw error("unknown escape \\" + e);
                }
            } else {
                b.append(ch);
            }
        }
    }

    static boolean isNameChar(char c) {
        return Character.isLetterOrDigit(c) || c == '_' || c == '.';
    }

    final void keyword(String w) {
        skip();
        if (!peekWord(w)) {
            throw error("expected '" + w + "'");
        }
        advance(w.length());
    }

    final boolean peekWord(String w) {
        return src.startsWith(w, pos) && (pos + w.length() >= src.length() || !isNameChar(src.charAt(pos + w.length())));
    }

    final void expect(char c) {
        skip();
        if (peek() != c) {
            throw error("expected '" + c + "'");
        }
        advance(1);
    }

    final boolean accept(char c) {
        skip();
        if (peek() == c) {
            advance(1);
            return true;
        }
        return false;
    }

    final char peek() {
        return pos < src.length() ? src.charAt(pos) : '\0';
    }

    final void skip() {
        while (pos < src.length()) {
            char c = src.charAt(pos);
            if (c == '#') {
                while (pos < src.length() && src.charAt(pos) != '\n') {
                    advance(1);
                }
            } else if (Character.isWhitespace(c)) {
                advance(1);
            } else {
                break;
            }
        }
    }

    final void advance(int n) {
        for (int i = 0; i < n && pos < src.length(); i++) {
            if (src.charAt(pos) == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
            pos++;
        }
    }

    final String describe(int at) {
        if (at >= src.length()) {
            return "the end of the file";
        }
        int end = at;
        while (end < src.length() && end < at + 12 && !Character.isWhitespace(src.charAt(end))) {
            end++;
        }
        return end == at ? "'" + src.charAt(at) + "'" : "'" + src.substring(at, end) + "'";
    }

    final ParseException error(String expected) {
        return new ParseException(line, col, expected + ", found " + describe(pos));
    }
}
