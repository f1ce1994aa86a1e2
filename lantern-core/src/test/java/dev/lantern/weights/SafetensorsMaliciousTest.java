package dev.lantern.weights;

import com.sun.management.ThreadMXBean;
import dev.lantern.ir.LanternException;
import dev.lantern.weights.SafetensorsException.Kind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;

import static dev.lantern.weights.SafetensorsFiles.data;
import static dev.lantern.weights.SafetensorsFiles.file;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Hostile safetensors files, one rule each: every one is refused by {@link SafetensorsFile#open}
 * with a {@link SafetensorsException} of the rule's kind and a message that names what was found,
 * and opening it allocates no more than a small constant (the claimed sizes, up to 2^63 bytes,
 * are compared, never allocated).
 */
class SafetensorsMaliciousTest {
    /** Beyond the header's own copy: far below any claimed size here (>= 2^32), far above what reading these headers costs. */
    private static final long ALLOCATION_SLACK = 4L << 20;

    @TempDir
    Path dir;

    private SafetensorsException rejected(Kind kind, String messagePart, byte[] bytes) throws IOException {
        Path p = SafetensorsFiles.write(dir, "bad.safetensors", bytes);
        ThreadMXBean mx = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = mx.getCurrentThreadAllocatedBytes();
        SafetensorsException e = assertThrows(SafetensorsException.class, () -> SafetensorsFile.open(p).close());
        long allocated = mx.getCurrentThreadAllocatedBytes() - before;
        assertEquals(kind, e.kind(), e.getMessage());
        assertTrue(e.getMessage().startsWith(p.toString() + ": "), e.getMessage());
        assertTrue(e.getMessage().contains(messagePart), "message '" + e.getMessage() + "' lacks '" + messagePart + "'");
        assertTrue(allocated < bytes.length + ALLOCATION_SLACK, "allocated " + allocated + " bytes to reject " + e.getMessage());
        assertInstanceOf(LanternException.class, e);
        return e;
    }

    private static String entry(String name, String dtype, String shape, long begin, long end) {
        return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":[" + begin + "," + end + "]}";
    }

    private static byte[] lengthThen(long headerLength, byte[] rest) {
        return ByteBuffer.allocate(8 + rest.length).order(ByteOrder.LITTLE_ENDIAN).putLong(headerLength).put(rest).array();
    }

    @Test
    void fileShorterThanTheLength() throws IOException {
        rejected(Kind.TRUNCATED, "file is 5 bytes, shorter than the 8-byte header length", new byte[] {1, 2, 3, 4, 5});
    }

    @Test
    void headerLengthPastTheEndOfTheFile() throws IOException {
        rejected(Kind.HEADER_PAST_END, "header length 4096 bytes reaches past the end of the file (24 bytes)",
                lengthThen(4096, "{}              ".getBytes(StandardCharsets.US_ASCII)));
    }

    @Test
    void headerOver100MB() throws IOException {
        rejected(Kind.HEADER_TOO_LARGE, "header length 100000001 bytes is over the limit of 100000000",
                lengthThen(100_000_001L, "{}".getBytes(StandardCharsets.US_ASCII)));
    }

    @Test
    void headerLengthWithTheTopBitSet() throws IOException {
        // read as signed it would be negative: it must still be "too large", not pass a < check
        rejected(Kind.HEADER_TOO_LARGE, "header length 18446744073709551615 bytes", lengthThen(-1L, new byte[8]));
    }

    @Test
    void headerNotJson() throws IOException {
        rejected(Kind.HEADER_NOT_JSON, "header is not valid JSON: at byte 5: expected ':', found '}'",
                file("{\"a\" }", new byte[0]));
    }

    @Test
    void headerNotAnObject() throws IOException {
        rejected(Kind.HEADER_NOT_OBJECT, "header is a JSON array, not an object", file("[1, 2]", new byte[0]));
    }

    @Test
    void overlappingOffsets() throws IOException {
        rejected(Kind.OVERLAP, "tensor \"b\" [4, 12) overlaps tensor \"a\" [0, 8)",
                file("{" + entry("a", "F32", "[2]", 0, 8) + "," + entry("b", "F32", "[2]", 4, 12) + "}", data(12)));
    }

    @Test
    void outOfOrderOffsets() throws IOException {
        rejected(Kind.BAD_OFFSETS, "tensor \"a\": data_offsets [8, 0] begin after end",
                file("{" + entry("a", "F32", "[2]", 8, 0) + "}", data(8)));
    }

    @Test
    void gapBetweenTensors() throws IOException {
        rejected(Kind.GAP, "4 bytes [8, 12) of the data belong to no tensor (before tensor \"b\")",
                file("{" + entry("a", "F32", "[2]", 0, 8) + "," + entry("b", "F32", "[1]", 12, 16) + "}", data(16)));
    }

    @Test
    void gapBeforeTheFirstTensor() throws IOException {
        rejected(Kind.GAP, "2 bytes [0, 2) of the data belong to no tensor", file("{" + entry("a", "U8", "[2]", 2, 4) + "}", data(4)));
    }

    @Test
    void trailingBytesAfterTheLastTensor() throws IOException {
        rejected(Kind.TRAILING_BYTES, "3 bytes after the last tensor (data is 11 bytes, tensors end at 8)",
                file("{" + entry("a", "F32", "[2]", 0, 8) + "}", data(11)));
    }

    @Test
    void shapeTimesDtypeOverflow() throws IOException {
        // 2^31 * 2^31 elements fit a long; times 4 bytes they do not
        rejected(Kind.SIZE_OVERFLOW, "F32 [2147483648, 2147483648, 4] has more bytes than a signed 64-bit integer holds",
                file("{" + entry("a", "F32", "[2147483648,2147483648,4]", 0, 8) + "}", data(8)));
    }

    @Test
    void dimensionBeyond64Bits() throws IOException {
        rejected(Kind.SIZE_OVERFLOW, "entry 0 (99999999999999999999) does not fit a signed 64-bit integer",
                file("{" + entry("a", "U8", "[99999999999999999999]", 0, 8) + "}", data(8)));
    }

    @Test
    void sizeNotMatchingOffsets() throws IOException {
        rejected(Kind.SIZE_MISMATCH, "tensor \"a\": data_offsets [0, 8] hold 8 bytes, but F32 [3] needs 12",
                file("{" + entry("a", "F32", "[3]", 0, 8) + "}", data(8)));
    }

    @Test
    void duplicateNames() throws IOException {
        rejected(Kind.DUPLICATE_NAME, "header names \"a\" twice",
                file("{" + entry("a", "U8", "[1]", 0, 1) + "," + entry("a", "U8", "[1]", 1, 2) + "}", data(2)));
    }

    @Test
    void duplicateMetadata() throws IOException {
        rejected(Kind.DUPLICATE_NAME, "header names \"__metadata__\" twice",
                file("{\"__metadata__\":{},\"__metadata__\":{}}", new byte[0]));
    }

    @Test
    void unknownDtype() throws IOException {
        rejected(Kind.UNKNOWN_DTYPE, "tensor \"a\" has unknown dtype \"F128\"", file("{" + entry("a", "F128", "[1]", 0, 16) + "}", data(16)));
    }

    @Test
    void lowerCaseDtypeIsUnknown() throws IOException {
        rejected(Kind.UNKNOWN_DTYPE, "unknown dtype \"f32\"", file("{" + entry("a", "f32", "[1]", 0, 4) + "}", data(4)));
    }

    @Test
    void nonUtf8Name() throws IOException {
        byte[] json = ("{" + entry("a\u00ff", "U8", "[1]", 0, 1) + "}").getBytes(StandardCharsets.ISO_8859_1);
        rejected(Kind.HEADER_NOT_JSON, "at byte 3: invalid UTF-8 byte 0xff", file(json, data(1)));
    }

    @Test
    void overlongUtf8Name() throws IOException {
        // 0xC0 0xAF is an overlong '/': a lenient decoder turns it into a path separator
        byte[] json = ("{" + entry("a\u00c0\u00af", "U8", "[1]", 0, 1) + "}").getBytes(StandardCharsets.ISO_8859_1);
        rejected(Kind.HEADER_NOT_JSON, "invalid UTF-8 byte 0xc0", file(json, data(1)));
    }

    @Test
    void encodedSurrogateName() throws IOException {
        byte[] json = ("{" + entry("a\u00ed\u00a0\u0080", "U8", "[1]", 0, 1) + "}").getBytes(StandardCharsets.ISO_8859_1);
        rejected(Kind.HEADER_NOT_JSON, "invalid UTF-8 sequence starting 0xed", file(json, data(1)));
    }

    @Test
    void escapedLoneSurrogateName() throws IOException {
        rejected(Kind.HEADER_NOT_JSON, "lone surrogate \\ud800", file("{" + entry("a\\ud800", "U8", "[1]", 0, 1) + "}", data(1)));
    }

    @Test
    void negativeDimension() throws IOException {
        rejected(Kind.BAD_SHAPE, "tensor \"a\": shape entry 1 is negative (-2)", file("{" + entry("a", "U8", "[2,-2]", 0, 4) + "}", data(4)));
    }

    @Test
    void fractionalDimension() throws IOException {
        rejected(Kind.BAD_SHAPE, "shape entry 0 is 2.0, not an integer", file("{" + entry("a", "U8", "[2.0]", 0, 2) + "}", data(2)));
    }

    @Test
    void offsetsPastTheEndOfTheData() throws IOException {
        rejected(Kind.OFFSETS_PAST_END, "data_offsets [0, 4294967296] reach past the end of the data (8 bytes)",
                file("{" + entry("a", "U8", "[4294967296]", 0, 4294967296L) + "}", data(8)));
    }

    @Test
    void truncatedData() throws IOException {
        // a file cut short after its header: the last tensor's end is past the data that is left
        byte[] whole = file("{" + entry("a", "F32", "[4]", 0, 16) + "}", data(16));
        rejected(Kind.OFFSETS_PAST_END, "reach past the end of the data (10 bytes)", Arrays.copyOf(whole, whole.length - 6));
    }

    @Test
    void nonIntegerOffsets() throws IOException {
        rejected(Kind.BAD_OFFSETS, "data_offsets entry 1 is 1e3, not an integer",
                file("{\"a\":{\"dtype\":\"U8\",\"shape\":[1000],\"data_offsets\":[0,1e3]}}", data(1000)));
    }

    @Test
    void offsetsAsStrings() throws IOException {
        rejected(Kind.BAD_OFFSETS, "data_offsets entry 0 is a JSON string, not an integer",
                file("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[\"0\",1]}}", data(1)));
    }

    @Test
    void threeOffsets() throws IOException {
        rejected(Kind.BAD_OFFSETS, "data_offsets has more than 2 entries",
                file("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1,1]}}", data(1)));
    }

    @Test
    void unknownFieldInAnEntry() throws IOException {
        rejected(Kind.BAD_ENTRY, "tensor \"a\" has an unknown field \"offset\"",
                file("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"offset\":0}}", data(1)));
    }

    @Test
    void missingShape() throws IOException {
        rejected(Kind.BAD_ENTRY, "tensor \"a\" has no shape", file("{\"a\":{\"dtype\":\"U8\",\"data_offsets\":[0,1]}}", data(1)));
    }

    @Test
    void metadataNotStrings() throws IOException {
        rejected(Kind.BAD_METADATA, "__metadata__ value of \"step\" is a JSON number, not a string",
                file("{\"__metadata__\":{\"step\":3}}", new byte[0]));
    }

    @Test
    void deepNestingIsRefusedAtItsFirstBracket() throws IOException {
        String deep = "{\"__metadata__\":" + "[".repeat(100_000) + "]".repeat(100_000) + "}";
        rejected(Kind.BAD_METADATA, "__metadata__ is a JSON array, not an object of strings", file(deep, new byte[0]));
    }

    @Test
    void rankOver64() throws IOException {
        // 4 M zeros: a JSON tree of them would cost ~40x the header; the reader stops at dimension 65
        String shape = "[" + "0,".repeat(4_000_000) + "0]";
        rejected(Kind.BAD_SHAPE, "tensor \"a\": shape has more than 64 dimensions", file("{" + entry("a", "U8", shape, 0, 0) + "}", new byte[0]));
    }

    @Test
    void manyHostileValuesCostNoMoreThanTheHeader() throws IOException {
        // 8 MB of empty objects where a string belongs: refused at the first one
        String meta = "{\"__metadata__\":{\"a\":" + "{},".repeat(2_700_000) + "{}}}";
        rejected(Kind.BAD_METADATA, "__metadata__ value of \"a\" is a JSON object, not a string", file(meta, new byte[0]));
    }

    @Test
    void fieldTwiceInAnEntry() throws IOException {
        rejected(Kind.DUPLICATE_NAME, "tensor \"a\" names dtype twice",
                file("{\"a\":{\"dtype\":\"U8\",\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,1]}}", data(1)));
    }

    @Test
    void byteOrderMarkIsNotJson() throws IOException {
        byte[] json = ("\ufeff{}").getBytes(StandardCharsets.UTF_8);
        rejected(Kind.HEADER_NOT_JSON, "at byte 0: unexpected byte 0xef, expected a value", file(json, new byte[0]));
    }

    @Test
    void textAfterTheHeaderObject() throws IOException {
        rejected(Kind.HEADER_NOT_JSON, "text after the JSON value", file("{} {}", new byte[0]));
    }

    @Test
    void aFolderIsNotAFile() {
        SafetensorsException e = assertThrows(SafetensorsException.class, () -> SafetensorsFile.open(dir));
        assertEquals(Kind.IO, e.kind());
        assertEquals(dir + ": not a regular file", e.getMessage());
    }

    @Test
    void missingFileIsAnIoError() {
        SafetensorsException e = assertThrows(SafetensorsException.class, () -> SafetensorsFile.open(dir.resolve("none.safetensors")));
        assertEquals(Kind.IO, e.kind());
        assertTrue(e.getMessage().contains("NoSuchFileException"), e.getMessage());
    }
}
