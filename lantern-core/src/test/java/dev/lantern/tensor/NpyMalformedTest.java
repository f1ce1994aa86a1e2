package dev.lantern.tensor;

import dev.lantern.tensor.NpyException.Kind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.ByteArrayOutputStream;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every malformed {@code .npy} file, and every valid one Lantern does not take, is an
 * {@link NpyException} of the right kind whose one-line message names the file: never an index,
 * arithmetic or parse exception from inside the reader.
 */
class NpyMalformedTest {
    /** A v{@code major}.0 file: magic, version, the header's length and text, then {@code data} bytes. */
    static byte[] file(int major, String header, int data) {
        byte[] h = header.getBytes(major == 3 ? StandardCharsets.UTF_8 : StandardCharsets.ISO_8859_1);
        ByteBuffer b = ByteBuffer.allocate(8 + (major == 1 ? 2 : 4) + h.length + data).order(ByteOrder.LITTLE_ENDIAN);
        b.put(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', (byte) major, 0});
        if (major == 1) {
            b.putShort((short) h.length);
        } else {
            b.putInt(h.length);
        }
        return b.put(h).array(); // the data bytes stay zero
    }

    static String dict(String descr, String fortran, String shape) {
        return "{'descr': " + descr + ", 'fortran_order': " + fortran + ", 'shape': " + shape + ", }\n";
    }

    static NpyException refused(byte[] bytes) {
        NpyException e = assertThrows(NpyException.class, () -> Npy.read(MemorySegment.ofArray(bytes), "bad.npy"));
        assertTrue(e.getMessage().startsWith("bad.npy: "), e.getMessage());
        assertEquals(1, e.getMessage().lines().count(), e.getMessage());
        return e;
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
            not a dict (list)        | [1, 2]                                                        | 0  | BAD_HEADER
            not a dict (string)      | 'descr'                                                       | 0  | BAD_HEADER
            empty header             | ''                                                            | 0  | BAD_HEADER
            a key missing            | {'descr': '<f4', 'fortran_order': False}                      | 0  | BAD_HEADER
            an extra key             | {'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1} | 4  | BAD_HEADER
            a key twice              | {'descr': '<f4', 'descr': '<f4', 'fortran_order': False}      | 0  | BAD_HEADER
            unterminated dict        | {'descr': '<f4', 'fortran_order': False, 'shape': (2,),       | 8  | BAD_HEADER
            unterminated string      | {'descr': '<f4                                                | 0  | BAD_HEADER
            garbage after the dict   | {'descr': '<f4', 'fortran_order': False, 'shape': ()} x       | 4  | BAD_HEADER
            a non-string key         | {1: 2}                                                        | 0  | BAD_HEADER
            an unknown name          | {'descr': '<f4', 'fortran_order': false, 'shape': ()}         | 4  | BAD_HEADER
            fortran_order not a bool | {'descr': '<f4', 'fortran_order': 1, 'shape': ()}             | 4  | BAD_HEADER
            a float dimension        | {'descr': '<f4', 'fortran_order': False, 'shape': (2.5,)}     | 8  | BAD_HEADER
            unsigned dtype           | {'descr': '<u2', 'fortran_order': False, 'shape': (2,)}       | 4  | UNSUPPORTED_DTYPE
            big-endian dtype         | {'descr': '>f4', 'fortran_order': False, 'shape': (2,)}       | 8  | UNSUPPORTED_DTYPE
            object dtype             | {'descr': 'O',  'fortran_order': False, 'shape': (2,)}        | 16 | UNSUPPORTED_DTYPE
            structured dtype         | {'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}| 4  | UNSUPPORTED_DTYPE
            fortran order            | {'descr': '<f4', 'fortran_order': True, 'shape': (2, 2)}      | 16 | FORTRAN_ORDER
            negative dimension       | {'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}      | 0  | BAD_SHAPE
            shape a list             | {'descr': '<f4', 'fortran_order': False, 'shape': [2]}        | 8  | BAD_SHAPE
            shape an int             | {'descr': '<f4', 'fortran_order': False, 'shape': 2}          | 8  | BAD_SHAPE
            shape (2) is an int      | {'descr': '<f4', 'fortran_order': False, 'shape': (2)}        | 8  | BAD_SHAPE
            shape of a string        | {'descr': '<f4', 'fortran_order': False, 'shape': ('2',)}     | 8  | BAD_SHAPE
            shape of None            | {'descr': '<f4', 'fortran_order': False, 'shape': (None,)}    | 8  | BAD_SHAPE
            dimension over 2^31-1    | {'descr': '<f4', 'fortran_order': False, 'shape': (3000000000,)} | 0 | BAD_SHAPE
            a 50-digit dimension     | {'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999999999999999999999999999999,)} | 0 | BAD_HEADER
            element count overflows  | {'descr': '<f4', 'fortran_order': False, 'shape': (2000000000, 2000000000, 2000000000)} | 0 | SIZE_OVERFLOW
            byte size overflows      | {'descr': '<f8', 'fortran_order': False, 'shape': (2147483647, 2147483647, 2)} | 0 | SIZE_OVERFLOW
            data cut short           | {'descr': '<f4', 'fortran_order': False, 'shape': (4,)}       | 15 | TRUNCATED
            huge shape, no data      | {'descr': '<f4', 'fortran_order': False, 'shape': (100000, 100000)} | 0 | TRUNCATED
            trailing garbage         | {'descr': '<f4', 'fortran_order': False, 'shape': (4,)}       | 17 | TRAILING_BYTES
            data for an empty array  | {'descr': '<f4', 'fortran_order': False, 'shape': (0, 3)}     | 1  | TRAILING_BYTES
            """)
    void malformedHeadersAreTyped(String what, String header, int data, Kind kind) {
        for (int major = 1; major <= 3; major++) {
            NpyException e = refused(file(major, header.equals("''") ? "" : header, data));
            assertEquals(kind, e.kind(), what + " (v" + major + "): " + e.getMessage());
        }
    }

    @Test
    void preambleErrors() {
        assertEquals(Kind.TRUNCATED, refused(new byte[0]).kind());
        assertEquals(Kind.BAD_MAGIC, refused("hello, world".getBytes(StandardCharsets.US_ASCII)).kind());
        assertEquals(Kind.BAD_MAGIC, refused("PK\3\4".getBytes(StandardCharsets.US_ASCII)).kind()); // an .npz
        assertEquals(Kind.TRUNCATED, refused(new byte[] {(byte) 0x93, 'N', 'U', 'M'}).kind());
        byte[] v4 = file(1, dict("'<f4'", "False", "()"), 4);
        v4[6] = 4;
        assertEquals(Kind.UNSUPPORTED_VERSION, refused(v4).kind());
        byte[] v11 = file(1, dict("'<f4'", "False", "()"), 4);
        v11[7] = 1;
        assertEquals(Kind.UNSUPPORTED_VERSION, refused(v11).kind());
        // a 1.0 file that ends inside its 2-byte header length, a 2.0 file inside its 4-byte one
        assertEquals(Kind.TRUNCATED, refused(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 5}).kind());
        assertEquals(Kind.TRUNCATED, refused(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 5, 0, 0}).kind());
    }

    @Test
    void headerLengthErrors() {
        byte[] f = file(2, dict("'<f4'", "False", "()"), 4);
        byte[] past = f.clone();
        ByteBuffer.wrap(past).order(ByteOrder.LITTLE_ENDIAN).putInt(8, 5000);
        assertEquals(Kind.TRUNCATED, refused(past).kind());
        byte[] huge = f.clone();
        ByteBuffer.wrap(huge).order(ByteOrder.LITTLE_ENDIAN).putInt(8, -1); // 4 GiB - 1 as unsigned
        NpyException e = refused(huge);
        assertEquals(Kind.HEADER_TOO_LARGE, e.kind());
        assertTrue(e.getMessage().contains("4294967295"), e.getMessage());
    }

    @Test
    void deepNestingAndBadUtf8() {
        String deep = "(".repeat(5_000);
        assertEquals(Kind.BAD_HEADER, refused(file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': " + deep, 0)).kind());
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        byte[] ok = file(3, dict("'<f4'", "False", "()"), 4);
        b.write(ok, 0, ok.length);
        byte[] bad = b.toByteArray();
        bad[13] = (byte) 0xC3; // inside 'descr': a lone UTF-8 lead byte
        assertEquals(Kind.BAD_HEADER, refused(bad).kind());
        // the same byte in a 1.0 header is latin-1 text: the key is wrong, still typed
        byte[] v1 = file(1, dict("'<f4'", "False", "()"), 4);
        v1[11] = (byte) 0xC3;
        assertEquals(Kind.BAD_HEADER, refused(v1).kind());
    }

    @Test
    void numpyFilesOutsideTheSubsetAreTyped() throws Exception {
        for (String[] c : new String[][] {{"fortran", "FORTRAN_ORDER"}, {"big-endian", "UNSUPPORTED_DTYPE"},
                {"structured", "UNSUPPORTED_DTYPE"}, {"complex", "UNSUPPORTED_DTYPE"}}) {
            java.nio.file.Path p = NpyTest.fixture(c[0] + ".npy");
            NpyException e = assertThrows(NpyException.class, () -> Npy.read(p));
            assertEquals(Kind.valueOf(c[1]), e.kind(), e.getMessage());
            assertTrue(e.getMessage().startsWith(p + ": "), e.getMessage());
        }
    }
}
