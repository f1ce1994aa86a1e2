package dev.lantern.tensor;

import dev.lantern.ir.LanternException;

/**
 * A NumPy {@code .npy} file that Lantern cannot read: malformed, or valid NumPy that Lantern does
 * not take (a big-endian or structured dtype, Fortran order). The message is one line naming the
 * file and the problem with the values found; {@link #kind()} says which, so that callers and
 * tests need not match on text.
 */
public final class NpyException extends LanternException {
    /** What is wrong. */
    public enum Kind {
        /** The file does not start with {@code \x93NUMPY}. */
        BAD_MAGIC,
        /** A format version other than 1.0, 2.0 or 3.0. */
        UNSUPPORTED_VERSION,
        /** The file ends inside the preamble, the header or the data. */
        TRUNCATED,
        /** The header is longer than {@link Npy#MAX_HEADER_BYTES}. */
        HEADER_TOO_LARGE,
        /** The header is not a Python dict literal of exactly {@code descr}, {@code fortran_order} and {@code shape}. */
        BAD_HEADER,
        /** A dtype Lantern does not read (big-endian, structured, complex, object, ...). */
        UNSUPPORTED_DTYPE,
        /** {@code fortran_order: True}: only C order is read. */
        FORTRAN_ORDER,
        /** A shape that is not a tuple of non-negative integers that fit an int. */
        BAD_SHAPE,
        /** The element count or the byte size does not fit a signed 64-bit integer. */
        SIZE_OVERFLOW,
        /** Bytes after the data the shape and dtype describe. */
        TRAILING_BYTES,
        /** The file could not be read or written. */
        IO
    }

    private final Kind kind;

    public NpyException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    public NpyException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
