package dev.lantern.weights;

import java.nio.charset.StandardCharsets;

/**
 * A pull reader over strict JSON (RFC 8259) bytes: the caller asks for the value it expects next
 * and builds only what it keeps, so a document's cost in memory is the caller's choice, not the
 * document's ({@link SafetensorsHeader} reads a header straight into its entries; {@link JsonParser}
 * builds a tree). It decodes UTF-8 itself and refuses what a lenient parser lets through:
 * malformed or overlong UTF-8, encoded or escaped lone surrogates, raw control characters in
 * strings, a byte-order mark, comments, trailing commas, leading zeros, {@code NaN}, text after
 * the value, and nesting deeper than {@code maxDepth}. Duplicate keys are the caller's to catch
 * (it knows what a key means). Errors are {@link JsonException}s at a byte offset.
 *
 * <pre>{@code
 * c.beginObject();
 * while (c.hasNextMember()) {
 *     String key = c.memberName();
 *     if (c.peek() == Token.STRING) { String s = c.string(); } else { ... }
 * }
 * c.finish();
 * }</pre>
 */
public final class JsonCursor {
    /** What the next value is, by its first byte. */
    public enum Token {
        OBJECT("object"), ARRAY("array"), STRING("string"), NUMBER("number"), TRUE("boolean"), FALSE("boolean"), NULL("null");

        private final String kind;

        Token(String kind) {
            this.kind = kind;
        }

        /** "object", "array", "string", "number", "boolean" or "null", for messages. */
        public String kind() {
            return kind;
        }
    }

    private final byte[] bytes;
    private final int end;
    private final int maxDepth;
    /** For each open container, whether it has had a member or element yet. */
    private final boolean[] started;
    private int depth;
    private int pos;
    private final StringBuilder sb = new StringBuilder();

    public JsonCursor(byte[] bytes, int maxDepth) {
        this.bytes = bytes;
        this.end = bytes.length;
        this.maxDepth = maxDepth;
        this.started = new boolean[maxDepth + 1];
    }

    /** The offset of the next unread byte. */
    public int position() {
        return pos;
    }

    /** The kind of the next value (whitespace skipped). */
    public Token peek() {
        skipWhitespace();
        if (pos >= end) {
            throw error("unexpected end of input, expected a value");
        }
        int c = peekByte();
        return switch (c) {
            case '{' -> Token.OBJECT;
            case '[' -> Token.ARRAY;
            case '"' -> Token.STRING;
            case 't' -> Token.TRUE;
            case 'f' -> Token.FALSE;
            case 'n' -> Token.NULL;
            default -> {
                if (c == '-' || (c >= '0' && c <= '9')) {
                    yield Token.NUMBER;
                }
                throw error("unexpected " + describe(c) + ", expected a value");
            }
        };
    }

    public void beginObject() {
        open(Token.OBJECT);
    }

    public void beginArray() {
        open(Token.ARRAY);
    }

    private void open(Token t) {
        if (peek() != t) {
            throw error("expected " + (t == Token.OBJECT ? "'{'" : "'['") + found());
        }
        if (depth == maxDepth) {
            throw error("nesting deeper than " + maxDepth);
        }
        pos++;
        started[++depth] = false;
    }

    /** Whether the open object has another member; if so, the cursor is at its name. Consumes the closing '}'. */
    public boolean hasNextMember() {
        return hasNext('}', "expected a string key");
    }

    /** Whether the open array has another element. Consumes the closing ']'. */
    public boolean hasNextElement() {
        return hasNext(']', null);
    }

    private boolean hasNext(char close, String keyExpected) {
        skipWhitespace();
        if (pos >= end) {
            throw error("unexpected end of input in an " + (close == '}' ? "object" : "array"));
        }
        int c = peekByte();
        if (!started[depth]) {
            if (c == close) {
                pos++;
                depth--;
                return false;
            }
        } else if (c == close) {
            pos++;
            depth--;
            return false;
        } else if (c == ',') {
            pos++;
            skipWhitespace();
        } else {
            throw error("expected ',' or '" + close + "'" + found());
        }
        started[depth] = true;
        if (keyExpected != null && (pos >= end || peekByte() != '"')) {
            throw error(keyExpected + found());
        }
        return true;
    }

    /** The member's name, and the ':' after it. */
    public String memberName() {
        String name = stringText();
        skipWhitespace();
        if (pos >= end || peekByte() != ':') {
            throw error("expected ':'" + found());
        }
        pos++;
        return name;
    }

    public String string() {
        if (peek() != Token.STRING) {
            throw error("expected a string" + found());
        }
        return stringText();
    }

    /** The next number as written. */
    public String number() {
        if (peek() != Token.NUMBER) {
            throw error("expected a number" + found());
        }
        return numberText();
    }

    public boolean bool() {
        Token t = peek();
        if (t != Token.TRUE && t != Token.FALSE) {
            throw error("expected true or false" + found());
        }
        literal(t == Token.TRUE ? "true" : "false");
        return t == Token.TRUE;
    }

    public void nullValue() {
        if (peek() != Token.NULL) {
            throw error("expected null" + found());
        }
        literal("null");
    }

    /** After the top-level value: nothing but whitespace may follow. */
    public void finish() {
        skipWhitespace();
        if (pos != end) {
            throw error("text after the JSON value");
        }
    }

    private void literal(String word) {
        for (int i = 0; i < word.length(); i++) {
            if (pos >= end || peekByte() != word.charAt(i)) {
                throw error("invalid literal, expected '" + word + "'");
            }
            pos++;
        }
    }

    /** {@code -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?}, kept as text. */
    private String numberText() {
        int start = pos;
        if (peekByte() == '-') {
            pos++;
        }
        if (pos < end && peekByte() == '0') {
            pos++;
            if (pos < end && isDigit(peekByte())) {
                throw error("leading zero in a number");
            }
        } else {
            digits("a digit");
        }
        if (pos < end && peekByte() == '.') {
            pos++;
            digits("a digit after '.'");
        }
        if (pos < end && (peekByte() == 'e' || peekByte() == 'E')) {
            pos++;
            if (pos < end && (peekByte() == '+' || peekByte() == '-')) {
                pos++;
            }
            digits("a digit in the exponent");
        }
        return new String(bytes, start, pos - start, StandardCharsets.US_ASCII);
    }

    private void digits(String what) {
        if (pos >= end || !isDigit(peekByte())) {
            throw error("expected " + what + found());
        }
        while (pos < end && isDigit(peekByte())) {
            pos++;
        }
    }

    private String stringText() {
        pos++; // opening quote
        sb.setLength(0);
        while (true) {
            if (pos >= end) {
                throw error("unterminated string");
            }
            int c = next();
            if (c == '"') {
                return sb.toString();
            } else if (c == '\\') {
                escape();
            } else if (c < 0x20) {
                pos--;
                throw error("raw control character " + describe(c) + " in a string");
            } else if (c < 0x80) {
                sb.append((char) c);
            } else {
                pos--;
                utf8();
            }
        }
    }

    private void escape() {
        if (pos >= end) {
            throw error("unterminated escape");
        }
        int c = next();
        switch (c) {
            case '"' -> sb.append('"');
            case '\\' -> sb.append('\\');
            case '/' -> sb.append('/');
            case 'b' -> sb.append('\b');
            case 'f' -> sb.append('\f');
            case 'n' -> sb.append('\n');
            case 'r' -> sb.append('\r');
            case 't' -> sb.append('\t');
            case 'u' -> {
                int at = pos - 2;
                char u = hex4();
                if (Character.isHighSurrogate(u)) {
                    if (pos + 1 < end && peekByte() == '\\' && bytes[pos + 1] == 'u') {
                        pos += 2;
                        char low = hex4();
                        if (!Character.isLowSurrogate(low)) {
                            throw errorAt(at, "lone surrogate \\u" + hex(u) + " in a string");
                        }
                        sb.append(u).append(low);
                        return;
                    }
                    throw errorAt(at, "lone surrogate \\u" + hex(u) + " in a string");
                }
                if (Character.isLowSurrogate(u)) {
                    throw errorAt(at, "lone surrogate \\u" + hex(u) + " in a string");
                }
                sb.append(u);
            }
            default -> {
                pos--;
                throw error("invalid escape \\" + describe(c));
            }
        }
    }

    private char hex4() {
        int v = 0;
        for (int i = 0; i < 4; i++) {
            if (pos >= end) {
                throw error("unterminated \\u escape");
            }
            int d = Character.digit(peekByte(), 16);
            if (d < 0) {
                throw error("expected a hex digit in a \\u escape" + found());
            }
            pos++;
            v = v * 16 + d;
        }
        return (char) v;
    }

    /** One UTF-8 sequence, well-formed per Unicode 15 table 3-7 (no overlongs, no surrogates, at most U+10FFFF). */
    private void utf8() {
        int at = pos;
        int b0 = next();
        int n;
        int cp;
        int lo = 0x80;
        int hi = 0xBF;
        if (b0 >= 0xC2 && b0 <= 0xDF) {
            n = 1;
            cp = b0 & 0x1F;
        } else if (b0 >= 0xE0 && b0 <= 0xEF) {
            n = 2;
            cp = b0 & 0x0F;
            lo = b0 == 0xE0 ? 0xA0 : 0x80; // overlong
            hi = b0 == 0xED ? 0x9F : 0xBF; // surrogates
        } else if (b0 >= 0xF0 && b0 <= 0xF4) {
            n = 3;
            cp = b0 & 0x07;
            lo = b0 == 0xF0 ? 0x90 : 0x80; // overlong
            hi = b0 == 0xF4 ? 0x8F : 0xBF; // past U+10FFFF
        } else {
            throw errorAt(at, "invalid UTF-8 byte 0x" + Integer.toHexString(b0));
        }
        for (int i = 0; i < n; i++) {
            if (pos >= end) {
                throw errorAt(at, "truncated UTF-8 sequence");
            }
            int b = peekByte();
            if (b < (i == 0 ? lo : 0x80) || b > (i == 0 ? hi : 0xBF)) {
                throw errorAt(at, "invalid UTF-8 sequence starting 0x" + Integer.toHexString(b0));
            }
            pos++;
            cp = (cp << 6) | (b & 0x3F);
        }
        sb.appendCodePoint(cp);
    }

    private void skipWhitespace() {
        while (pos < end) {
            int c = peekByte();
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            pos++;
        }
    }

    private int peekByte() {
        return bytes[pos] & 0xFF;
    }

    private int next() {
        return bytes[pos++] & 0xFF;
    }

    private String found() {
        return pos >= end ? ", found the end of input" : ", found " + describe(peekByte());
    }

    private static boolean isDigit(int c) {
        return c >= '0' && c <= '9';
    }

    private static String describe(int c) {
        return c >= 0x21 && c < 0x7F ? "'" + (char) c + "'" : "byte 0x" + String.format("%02x", c);
    }

    private static String hex(char c) {
        return String.format("%04x", (int) c);
    }

    private JsonException error(String message) {
        return errorAt(pos, message);
    }

    private JsonException errorAt(int at, String message) {
        return new JsonException(at, message);
    }
}
