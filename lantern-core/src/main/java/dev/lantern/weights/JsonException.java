package dev.lantern.weights;

import dev.lantern.ir.LanternException;

/**
 * Text that is not strict JSON (RFC 8259), or JSON past the parser's limits. The message starts
 * with the byte offset of the fault. {@link #duplicateKey()} names a key that an object repeated,
 * the one fault that callers report in their own words (a safetensors tensor named twice).
 */
public final class JsonException extends LanternException {
    private final long offset;
    private final String duplicateKey;

    JsonException(long offset, String message) {
        this(offset, message, null);
    }

    JsonException(long offset, String message, String duplicateKey) {
        super("at byte " + offset + ": " + message);
        this.offset = offset;
        this.duplicateKey = duplicateKey;
    }

    public long offset() {
        return offset;
    }

    /** The repeated key when the fault is a duplicate key, else {@code null}. */
    public String duplicateKey() {
        return duplicateKey;
    }
}
