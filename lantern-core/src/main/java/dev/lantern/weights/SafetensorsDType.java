package dev.lantern.weights;

import dev.lantern.ir.DType;

/**
 * The element types the safetensors format defines, spelled as in its headers, little-endian.
 * All are read and exposed; whether the engine can compute in one is the engine's question
 * ({@link #irType()} is {@code null} where Lantern's IR has no such type). The sub-byte formats
 * (F4, F6_*) are not accepted: their sizes are not whole bytes per element.
 * The declaration order is the reference implementation's (its Rust {@code Dtype}, without the
 * sub-byte types): its writer lays tensors out in descending dtype order, then by name, which
 * aligns each tensor to its element size; {@link SafetensorsWriter} does the same, byte for byte.
 */
public enum SafetensorsDType {
    BOOL(1, DType.BOOL),
    U8(1, null),
    I8(1, null),
    F8_E5M2(1, null),
    F8_E4M3(1, null),
    F8_E8M0(1, null),
    I16(2, null),
    U16(2, null),
    F16(2, DType.F16),
    BF16(2, DType.BF16),
    I32(4, DType.I32),
    U32(4, null),
    F32(4, DType.F32),
    /** A complex number of two f32 (real, imaginary). */
    C64(8, null),
    F64(8, null),
    I64(8, DType.I64),
    U64(8, null);

    private final int bytes;
    private final DType irType;

    SafetensorsDType(int bytes, DType irType) {
        this.bytes = bytes;
        this.irType = irType;
    }

    /** Bytes per element. */
    public int bytes() {
        return bytes;
    }

    /** Lantern's IR type for this dtype, or {@code null} where the IR has none. */
    public DType irType() {
        return irType;
    }

    /** The dtype spelled {@code text} in a header (case-sensitive, as the format is), or {@code null}. */
    public static SafetensorsDType parse(String text) {
        for (SafetensorsDType d : values()) {
            if (d.name().equals(text)) {
                return d;
            }
        }
        return null;
    }

    /** The safetensors dtype for an IR type. */
    public static SafetensorsDType of(DType t) {
        for (SafetensorsDType d : values()) {
            if (d.irType == t) {
                return d;
            }
        }
        throw new IllegalArgumentException("no safetensors dtype for " + t);
    }
}
