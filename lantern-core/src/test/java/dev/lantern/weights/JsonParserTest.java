package dev.lantern.weights;

import dev.lantern.weights.JsonValue.JsonArray;
import dev.lantern.weights.JsonValue.JsonBoolean;
import dev.lantern.weights.JsonValue.JsonNull;
import dev.lantern.weights.JsonValue.JsonNumber;
import dev.lantern.weights.JsonValue.JsonObject;
import dev.lantern.weights.JsonValue.JsonString;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The strict JSON parser: what RFC 8259 allows parses to the values meant, the rest is refused at a byte offset. */
class JsonParserTest {
    private static JsonValue parse(String s) {
        return JsonParser.parse(s.getBytes(StandardCharsets.UTF_8), 8);
    }

    private static JsonException refused(String s, String messagePart) {
        JsonException e = assertThrows(JsonException.class, () -> parse(s));
        assertTrue(e.getMessage().contains(messagePart), "'" + e.getMessage() + "' lacks '" + messagePart + "'");
        return e;
    }

    @Test
    void parsesEveryKindOfValue() {
        JsonObject o = (JsonObject) parse(" {\"a\" : [1, -2.5e3, true, false, null], \"b\":{}, \"c\":\"x\\ty\\u00e9\\ud83d\\ude00/\\/\"}\n");
        assertEquals(List.of("a", "b", "c"), List.copyOf(o.members().keySet()));
        List<JsonValue> a = ((JsonArray) o.members().get("a")).elements();
        assertEquals(new JsonNumber("1"), a.get(0));
        assertEquals("-2.5e3", ((JsonNumber) a.get(1)).literal());
        assertEquals(new JsonBoolean(true), a.get(2));
        assertEquals(new JsonBoolean(false), a.get(3));
        assertEquals(new JsonNull(), a.get(4));
        assertEquals(new JsonObject(java.util.Map.of()), o.members().get("b"));
        assertEquals("x\ty\u00e9\ud83d\ude00//", ((JsonString) o.members().get("c")).value());
    }

    @Test
    void integersAreExactAndOnlyIntegers() {
        assertEquals(9007199254740993L, ((JsonNumber) parse("9007199254740993")).longValueOrNull());
        assertEquals(Long.MAX_VALUE, ((JsonNumber) parse("9223372036854775807")).longValueOrNull());
        assertNull(((JsonNumber) parse("9223372036854775808")).longValueOrNull());
        assertNull(((JsonNumber) parse("8.0")).longValueOrNull());
        assertNull(((JsonNumber) parse("1E3")).longValueOrNull());
    }

    @Test
    void rawUtf8IsDecoded() {
        assertEquals("名前é\uD83D\uDE00", ((JsonString) parse("\"名前é\uD83D\uDE00\"")).value());
    }

    @Test
    void refusesWhatLenientParsersAccept() {
        refused("{\"a\":1,}", "at byte 7: expected a string key, found '}'");
        refused("[1,]", "at byte 3: unexpected ']', expected a value");
        refused("{'a':1}", "expected a string key, found");
        refused("01", "at byte 1: leading zero");
        refused("1.", "expected a digit after '.'");
        refused("-", "expected a digit");
        refused("NaN", "unexpected 'N'");
        refused("tru", "invalid literal");
        refused("// c\n{}", "unexpected '/'");
        refused("\"a\nb\"", "raw control character byte 0x0a in a string");
        refused("\"\\x\"", "invalid escape \\'x'");
        refused("\"\\udc00\"", "lone surrogate \\udc00");
        refused("\"\\ud800\\u0041\"", "lone surrogate \\ud800");
        refused("\"abc", "unterminated string");
        refused("{\"a\":1", "unexpected end of input in an object");
        refused("", "unexpected end of input, expected a value");
        refused("{} x", "at byte 3: text after the JSON value");
    }

    @Test
    void refusesMalformedUtf8() {
        byte[][] bad = {
            {'"', (byte) 0x80, '"'},                               // continuation byte first
            {'"', (byte) 0xC1, (byte) 0xBF, '"'},                  // overlong 2-byte
            {'"', (byte) 0xE0, (byte) 0x80, (byte) 0x80, '"'},     // overlong 3-byte
            {'"', (byte) 0xED, (byte) 0xA0, (byte) 0x80, '"'},     // encoded surrogate
            {'"', (byte) 0xF4, (byte) 0x90, (byte) 0x80, (byte) 0x80, '"'}, // past U+10FFFF
            {'"', (byte) 0xE2, (byte) 0x82, '"'},                  // truncated
            {'"', (byte) 0xF8, '"'},
        };
        for (byte[] b : bad) {
            JsonException e = assertThrows(JsonException.class, () -> JsonParser.parse(b, 8));
            assertEquals(1, e.offset(), e.getMessage());
        }
    }

    @Test
    void duplicateKeysAreNamed() {
        JsonException e = refused("{\"a\":1,\"b\":{\"x\":1,\"x\":2}}", "duplicate key \"x\"");
        assertEquals("x", e.duplicateKey());
        assertEquals(18, e.offset());
    }

    @Test
    void depthIsLimited() {
        assertEquals(8, depth(parse("[".repeat(8) + "]".repeat(8))));
        refused("[".repeat(9) + "]".repeat(9), "at byte 8: nesting deeper than 8");
        // a million brackets cost nothing: the limit stops the descent at depth 9
        refused("[".repeat(1_000_000), "nesting deeper than 8");
    }

    private static int depth(JsonValue v) {
        return v instanceof JsonArray a ? 1 + (a.elements().isEmpty() ? 0 : depth(a.elements().get(0))) : 0;
    }
}
