package dev.lantern.tensor;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.NpyException.Kind;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * NumPy's {@code .npy} format (numpy.lib.format), for tensors in and out of the command line.
 *
 * <p><b>Read:</b> format versions 1.0, 2.0 and 3.0; C order only ({@code fortran_order: True} is
 * an {@link NpyException}); little-endian {@code <f4} (to f32), {@code <f2} (to f16),
 * {@code <f8} (converted to f32, rounding to nearest), {@code <i4}, {@code <i8} and {@code |b1}.
 * Every malformed file, and every valid one outside this set, is an {@link NpyException} naming
 * the file and the problem; the file must end exactly where its data does (NumPy itself ignores
 * trailing bytes; here they are taken as a sign of a wrong or damaged file). The header is capped
 * at {@link #MAX_HEADER_BYTES}, NumPy's own default limit.
 *
 * <p><b>Write:</b> format 1.0 (2.0 only for a header over 64 KiB, as NumPy does), byte for byte
 * what {@code numpy.save} writes for the same array. NumPy has no bfloat16, so a bf16 tensor is
 * written as {@code <f4} (exactly: every bf16 value is an f32 value); f32, f16, i32, i64 and
 * bool keep their type.
 */
public final class Npy {
    /** NumPy's {@code _MAX_HEADER_SIZE}: a longer header is refused unread. */
    public static final int MAX_HEADER_BYTES = 10_000;
    private static final byte[] MAGIC = {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y'};
    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** numpy.lib.format.GROWTH_AXIS_MAX_DIGITS: spare header room numpy.save leaves for appends. */
    private static final int GROWTH_AXIS_MAX_DIGITS = 21;
    private static final int ARRAY_ALIGN = 64;

    private Npy() {}

    /** The element types read, by descriptor: the file's element size and the tensor's dtype. */
    private enum Descr {
        F4("<f4", 4, DType.F32), F2("<f2", 2, DType.F16), F8("<f8", 8, DType.F32),
        I4("<i4", 4, DType.I32), I8("<i8", 8, DType.I64), B1("|b1", 1, DType.BOOL);

        final String text;
        final int bytes;
        final DType dtype;

        Descr(String text, int bytes, DType dtype) {
            this.text = text;
            this.bytes = bytes;
            this.dtype = dtype;
        }

        static Descr of(String descr, String source) {
            for (Descr d : values()) {
                if (d.text.equals(descr)) {
                    return d;
                }
            }
            String why = descr.startsWith(">") ? " (big-endian)" : "";
            throw new NpyException(Kind.UNSUPPORTED_DTYPE, source + ": dtype '" + NpyHeader.excerpt(descr) + "'" + why
                    + " is not read; expected one of <f4, <f2, <f8, <i4, <i8, |b1");
        }
    }

    /** Reads the file at {@code path} into a new tensor. */
    public static Tensor read(Path path) {
        String source = path.toString();
        if (Files.isDirectory(path)) {
            throw new NpyException(Kind.IO, source + ": is a folder, not an .npy file");
        }
        if (Files.exists(path) && !Files.isRegularFile(path)) {
            throw new NpyException(Kind.IO, source + ": not a regular file");
        }
        try (Arena arena = Arena.ofConfined(); FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            long size = ch.size();
            MemorySegment bytes = size == 0 ? MemorySegment.ofArray(new byte[0])
                    : ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
            return read(bytes, source);
        } catch (java.nio.file.NoSuchFileException e) {
            throw new NpyException(Kind.IO, source + ": no such file", e);
        } catch (IOException e) {
            throw new NpyException(Kind.IO, source + ": cannot read: " + e.getMessage(), e);
        }
    }

    /** Reads {@code .npy} bytes already in memory; {@code source} names them in errors. */
    public static Tensor read(MemorySegment bytes, String source) {
        long size = bytes.byteSize();
        if (size < MAGIC.length + 2) {
            throw new NpyException(size >= 1 && bytes.get(ValueLayout.JAVA_BYTE, 0) != MAGIC[0] ? Kind.BAD_MAGIC : Kind.TRUNCATED,
                    source + ": " + size + " bytes, shorter than the 8-byte .npy preamble");
        }
        for (int i = 0; i < MAGIC.length; i++) {
            if (bytes.get(ValueLayout.JAVA_BYTE, i) != MAGIC[i]) {
                throw new NpyException(Kind.BAD_MAGIC, source + ": not an .npy file (it does not start with \\x93NUMPY)");
            }
        }
        int major = bytes.get(ValueLayout.JAVA_BYTE, 6) & 0xff;
        int minor = bytes.get(ValueLayout.JAVA_BYTE, 7) & 0xff;
        if (!(minor == 0 && major >= 1 && major <= 3)) {
            throw new NpyException(Kind.UNSUPPORTED_VERSION, source + ": format version " + major + "." + minor
                    + " (1.0, 2.0 and 3.0 are read)");
        }
        int lenBytes = major == 1 ? 2 : 4;
        long start = 8 + lenBytes;
        if (size < start) {
            throw new NpyException(Kind.TRUNCATED, source + ": the file ends inside the header length");
        }
        long headerLen = major == 1
                ? Short.toUnsignedLong(bytes.get(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 8))
                : Integer.toUnsignedLong(bytes.get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 8));
        if (headerLen > MAX_HEADER_BYTES) {
            throw new NpyException(Kind.HEADER_TOO_LARGE, source + ": the header is " + headerLen + " bytes, over the limit of "
                    + MAX_HEADER_BYTES);
        }
        if (size < start + headerLen) {
            throw new NpyException(Kind.TRUNCATED, source + ": the header is " + headerLen + " bytes, but the file ends after "
                    + (size - start));
        }
        byte[] raw = bytes.asSlice(start, headerLen).toArray(ValueLayout.JAVA_BYTE);
        NpyHeader h = NpyHeader.parse(decode(raw, major == 3, source), source);
        Descr d = Descr.of(h.descr(), source);
        if (h.fortran()) {
            throw new NpyException(Kind.FORTRAN_ORDER, source + ": fortran_order is True; only C-order arrays are read "
                    + "(save np.ascontiguousarray(a))");
        }
        long numel = 1;
        long dataBytes;
        try {
            for (int dim : h.shape()) {
                numel = Math.multiplyExact(numel, dim);
            }
            dataBytes = Math.multiplyExact(numel, d.bytes);
        } catch (ArithmeticException e) {
            throw new NpyException(Kind.SIZE_OVERFLOW, source + ": the shape " + java.util.Arrays.toString(h.shape())
                    + " of " + d.text + " overflows 64 bits");
        }
        long data = start + headerLen;
        if (size - data < dataBytes) {
            throw new NpyException(Kind.TRUNCATED, source + ": " + d.text + java.util.Arrays.toString(h.shape()) + " needs "
                    + dataBytes + " bytes of data, the file holds " + (size - data));
        }
        if (size - data > dataBytes) {
            throw new NpyException(Kind.TRAILING_BYTES, source + ": " + (size - data - dataBytes) + " bytes after the "
                    + dataBytes + " bytes of " + d.text + java.util.Arrays.toString(h.shape()));
        }
        Tensor t = Tensor.allocate(d.dtype, Shape.of(h.shape()));
        if (d == Descr.F8) {
            for (long i = 0; i < numel; i++) {
                t.set(i, (float) bytes.get(F64, data + 8 * i));
            }
        } else {
            // every other descriptor is the tensor's own little-endian storage
            MemorySegment.copy(bytes, data, t.segment(), 0, dataBytes);
        }
        return t;
    }

    /** The header's text: ASCII-compatible latin-1 before version 3.0, strict UTF-8 from it. */
    private static String decode(byte[] raw, boolean utf8, String source) {
        if (!utf8) {
            return new String(raw, StandardCharsets.ISO_8859_1);
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(raw)).toString();
        } catch (CharacterCodingException e) {
            throw new NpyException(Kind.BAD_HEADER, source + ": the version 3.0 header is not UTF-8");
        }
    }

    /** {@code t} as the bytes of an {@code .npy} file, as {@code numpy.save} writes them. */
    public static byte[] toBytes(Tensor t) {
        Descr d = switch (t.dtype()) {
            case F32, BF16 -> Descr.F4;
            case F16 -> Descr.F2;
            case I32 -> Descr.I4;
            case I64 -> Descr.I8;
            case BOOL -> Descr.B1;
        };
        byte[] header = header(d.text, t.shape().dims());
        long dataBytes = t.numel() * d.bytes;
        if (header.length + dataBytes > Integer.MAX_VALUE - 8) {
            throw new NpyException(Kind.SIZE_OVERFLOW, "a " + t.type() + " tensor is too large for one byte array");
        }
        byte[] out = new byte[(int) (header.length + dataBytes)];
        System.arraycopy(header, 0, out, 0, header.length);
        MemorySegment dst = MemorySegment.ofArray(out);
        if (t.dtype() == DType.BF16) {
            for (long i = 0; i < t.numel(); i++) {
                dst.set(Tensor.F32, header.length + 4 * i, t.get(i));
            }
        } else {
            MemorySegment.copy(t.segment(), 0, dst, header.length, dataBytes);
        }
        return out;
    }

    /** Writes {@code t} to {@code path} (not atomically: the command line renames a finished file into place). */
    public static void write(Path path, Tensor t) {
        try {
            Files.write(path, toBytes(t));
        } catch (IOException e) {
            throw new NpyException(Kind.IO, path + ": cannot write: " + e.getMessage(), e);
        }
    }

    /** Magic, version, length and the padded dict, as numpy's {@code _write_array_header}. */
    private static byte[] header(String descr, int[] shape) {
        StringBuilder dict = new StringBuilder("{'descr': '").append(descr).append("', 'fortran_order': False, 'shape': (");
        for (int i = 0; i < shape.length; i++) {
            dict.append(i > 0 ? ", " : "").append(shape[i]);
        }
        dict.append(shape.length == 1 ? ",), }" : "), }");
        if (shape.length > 0) {
            dict.repeat(" ", GROWTH_AXIS_MAX_DIGITS - Integer.toString(shape[0]).length());
        }
        byte[] text = dict.toString().getBytes(StandardCharsets.ISO_8859_1);
        int hlen = text.length + 1;
        int lenBytes = 2;
        int pad = ARRAY_ALIGN - ((MAGIC.length + 2 + lenBytes + hlen) % ARRAY_ALIGN);
        if (hlen + pad > 0xffff) { // numpy falls back to 2.0 when the length does not fit 16 bits
            lenBytes = 4;
            pad = ARRAY_ALIGN - ((MAGIC.length + 2 + lenBytes + hlen) % ARRAY_ALIGN);
        }
        ByteBuffer b = ByteBuffer.allocate(MAGIC.length + 2 + lenBytes + hlen + pad).order(ByteOrder.LITTLE_ENDIAN);
        b.put(MAGIC).put((byte) (lenBytes == 2 ? 1 : 2)).put((byte) 0);
        if (lenBytes == 2) {
            b.putShort((short) (hlen + pad));
        } else {
            b.putInt(hlen + pad);
        }
        b.put(text);
        for (int i = 0; i < pad; i++) {
            b.put((byte) ' ');
        }
        return b.put((byte) '\n').array();
    }
}
