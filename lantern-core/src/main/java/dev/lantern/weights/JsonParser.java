package dev.lantern.weights;

import dev.lantern.util.JsonStrings;
import dev.lantern.weights.JsonValue.JsonArray;
import dev.lantern.weights.JsonValue.JsonBoolean;
import dev.lantern.weights.JsonValue.JsonNull;
import dev.lantern.weights.JsonValue.JsonNumber;
import dev.lantern.weights.JsonValue.JsonObject;
import dev.lantern.weights.JsonValue.JsonString;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict JSON parser (RFC 8259) over bytes, for headers and index files that come from outside.
 * It decodes UTF-8 itself and refuses what a lenient parser lets through: malformed or overlong
 * UTF-8, encoded or escaped lone surrogates, raw control characters in strings, a byte-order
 * mark, comments, trailing commas, leading zeros, {@code NaN}, text after the value, a key twice
 * in one object, and nesting deeper than {@code maxDepth}. Everything it allocates is proportional
 * to the bytes it has read, so a hostile document costs at most a constant times its own length.
 */
public final class JsonParser {
    private final byte[] bytes;
    private final int base;
    private final int end;
    private final int maxDepth;
    private int pos;
    private final StringBuilder sb = new StringBuilder();

    private JsonParser(byte[] bytes, int start, int end, int maxDepth) {
        this.bytes = bytes;
        this.pos = start;
        this.base = start;
        this.end = end;
        this.maxDepth = maxDepth;
    }

    /**
     * The one JSON value in {@code bytes[start, end)}; offsets in errors count from {@code start}.
     * The range is copied to the heap first (it is the document itself, and array reads are what
     * a cold JVM runs fastest: a mapped 20 KB header parses in a few milliseconds from the first call).
     */
    public static JsonValue parse(MemorySegment bytes, long start, long end, int maxDepth) {
        if (start < 0 || end > bytes.byteSize() || start > end || end - start > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("range [" + start + ", " + end + ") outside " + bytes.byteSize() + " bytes");
        }
        byte[] copy = new byte[(int) (end - start)];
        MemorySegment.copy(bytes, ValueLayout.JAVA_BYTE, start, copy, 0, copy.length);
        return parse(copy, maxDepth);
    }

    /** The one JSON value in {@code bytes}. */
    public static JsonValue parse(byte[] bytes, int maxDepth) {
        JsonParser p = new JsonParser(bytes, 0, bytes.length, maxDepth);
        p.skipWhitespace();
        JsonValue v = p.value(0);
        p.skipWhitespace();
        if (p.pos != p.end) {
            throw p.error("text after the JSON value");
        }
        return v;
    }

    private JsonValue value(int depth) {
        if (pos >= end) {
            throw error("unexpected end of input, expected a value");
        }
        int c = peek();
        return switch (c) {
            case '{' -> object(depth + 1);
            case '[' -> array(depth + 1);
            case '"' -> new JsonString(string());
            case 't' -> literal("true", new JsonBoolean(true));
            case 'f' -> literal("false", new JsonBoolean(false));
            case 'n' -> literal("null", new JsonNull());
            default -> {
                if (c == '-' || (c >= '0' && c <= '9')) {
                    yield number();
                }
                throw error("unexpected " + describe(c) + ", expected a value");
            }
        };
    }

    private JsonObject object(int depth) {
        checkDepth(depth);
        pos++; // '{'
        Map<String, JsonValue> members = new LinkedHashMap<>();
        skipWhitespace();
        if (pos < end && peek() == '}') {
            pos++;
            return new JsonObject(Collections.unmodifiableMap(members));
        }
        while (true) {
            skipWhitespace();
            if (pos >= end || peek() != '"') {
                throw error("expected a string key" + found());
            }
            int keyAt = pos;
            String key = string();
            skipWhitespace();
            expect(':');
            skipWhitespace();
            JsonValue v = value(depth);
            if (members.putIfAbsent(key, v) != null) {
                throw new JsonException(keyAt - base, "duplicate key " + quoteForMessage(key), key);
            }
            skipWhitespace();
            if (pos >= end) {
                throw error("unexpected end of input in an object");
            }
            int c = next();
            if (c == '}') {
                return new JsonObject(Collections.unmodifiableMap(members));
            }
            if (c != ',') {
                pos--;
                throw error("expected ',' or '}'" + found());
            }
        }
    }

    private JsonArray array(int depth) {
        checkDepth(depth);
        pos++; // '['
        List<JsonValue> elements = new ArrayList<>();
        skipWhitespace();
        if (pos < end && peek() == ']') {
            pos++;
            return new JsonArray(Collections.unmodifiableList(elements));
        }
        while (true) {
            skipWhitespace();
            elements.add(value(depth));
            skipWhitespace();
            if (pos >= end) {
                throw error("unexpected end of input in an array");
            }
            int c = next();
            if (c == ']') {
                return new JsonArray(Collections.unmodifiableList(elements));
            }
            if (c != ',') {
                pos--;
                throw error("expected ',' or ']'" + found());
            }
        }
    }

    private void checkDepth(int depth) {
        if (depth > maxDepth) {
            throw error("nesting deeper than " + maxDepth);
        }
    }

    private JsonValue literal(String word, JsonValue v) {
        for (int i = 0; i < word.length(); i++) {
            if (pos >= end || peek() != word.charAt(i)) {
                throw error("invalid literal, expected '" + word + "'");
            }
            pos++;
        }
        return v;
    }

    /** {@code -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?}, kept as text. */
    private JsonNumber number() {
        int start = pos;
        if (peek() == '-') {
            pos++;
        }
        if (pos < end && peek() == '0') {
            pos++;
            if (pos < end && isDigit(peek())) {
                throw error("leading zero in a number");
            }
        } else {
            digits("a digit");
        }
        if (pos < end && peek() == '.') {
            pos++;
            digits("a digit after '.'");
        }
        if (pos < end && (peek() == 'e' || peek() == 'E')) {
            pos++;
            if (pos < end && (peek() == '+' || peek() == '-')) {
                pos++;
            }
            digits("a digit in the exponent");
        }
        return new JsonNumber(new String(bytes, start, pos - start, StandardCharsets.US_ASCII));
    }

    private void digits(String what) {
        if (pos >= end || !isDigit(peek())) {
            throw error("expected " + what + found());
        }
        while (pos < end && isDigit(peek())) {
            pos++;
        }
    }

    private String string() {
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
                    if (pos + 1 < end && peek() == '\\' && bytes[pos + 1] == 'u') {
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
            int d = Character.digit(peek(), 16);
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
            int b = peek();
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
            int c = peek();
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            pos++;
        }
    }

    private void expect(char c) {
        if (pos >= end || peek() != c) {
            throw error("expected '" + c + "'" + found());
        }
        pos++;
    }

    private int peek() {
        return bytes[pos] & 0xFF;
    }

    private int next() {
        return bytes[pos++] & 0xFF;
    }

    private String found() {
        return pos >= end ? ", found the end of input" : ", found " + describe(peek());
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

    /** Offsets in errors count from the document's first byte, not the segment's. */
    private JsonException errorAt(int at, String message) {
        return new JsonException(at - base, message);
    }

    /** {@code s} quoted for a one-line message, cut to 80 characters. */
    static String quoteForMessage(String s) {
        return JsonStrings.quote(s.length() > 80 ? s.substring(0, 80) + "..." : s);
    }
}
