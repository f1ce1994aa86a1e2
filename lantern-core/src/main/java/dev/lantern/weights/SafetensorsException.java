package dev.lantern.weights;

import dev.lantern.ir.LanternException;

/**
 * A safetensors file, or a sharded model's index, that breaks the format's rules. The message is
 * one line: the file, then the rule broken with the values found. {@link #kind()} says which rule,
 * so that callers and tests need not match on text.
 */
public final class SafetensorsException extends LanternException {
    /** The rule broken. */
    public enum Kind {
        /** Shorter than its 8-byte header length, or cut short. */
        TRUNCATED,
        /** The header length is over {@link SafetensorsHeader#MAX_HEADER_BYTES}. */
        HEADER_TOO_LARGE,
        /** The header length reaches past the end of the file. */
        HEADER_PAST_END,
        /** The header is not strict JSON (syntax, UTF-8, nesting). */
        HEADER_NOT_JSON,
        /** The header is JSON but not an object. */
        HEADER_NOT_OBJECT,
        /** {@code __metadata__} is not an object of strings. */
        BAD_METADATA,
        /** A tensor entry is not an object of exactly {@code dtype}, {@code shape}, {@code data_offsets}. */
        BAD_ENTRY,
        UNKNOWN_DTYPE,
        /** A dimension that is not a non-negative integer. */
        BAD_SHAPE,
        /** The element count or byte size does not fit a signed 64-bit integer. */
        SIZE_OVERFLOW,
        /** {@code data_offsets} that are not two non-negative integers with begin <= end. */
        BAD_OFFSETS,
        /** {@code end - begin} differs from the element count times the dtype's size. */
        SIZE_MISMATCH,
        /** A tensor's bytes reach past the end of the data. */
        OFFSETS_PAST_END,
        /** Two tensors share bytes. */
        OVERLAP,
        /** Bytes that no tensor covers before or between tensors. */
        GAP,
        /** Bytes after the last tensor. */
        TRAILING_BYTES,
        /** Two tensors, or two keys of one object, with one name. */
        DUPLICATE_NAME,
        /** A tensor asked for by name that the file or model does not hold. */
        MISSING_TENSOR,
        /** A sharded model's index that is not what the format says. */
        BAD_INDEX,
        /** The file could not be read. */
        IO
    }

    private final Kind kind;

    public SafetensorsException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    public SafetensorsException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
