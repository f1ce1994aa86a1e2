package dev.lantern.tensor;

/** Conversions between f32 and the 16-bit float formats, rounding to nearest even. */
public final class Half {
    private Half() {}

    /** f32 to bf16 bits (round to nearest even; NaN stays NaN). */
    public static short toBf16(float f) {
        int bits = Float.floatToRawIntBits(f);
        if (Float.isNaN(f)) {
            return (short) ((bits >>> 16) | 0x40);
        }
        int rounding = 0x7FFF + ((bits >>> 16) & 1);
        return (short) ((bits + rounding) >>> 16);
    }

    public static float fromBf16(short h) {
        return Float.intBitsToFloat((h & 0xFFFF) << 16);
    }

    public static short toF16(float f) {
        return Float.floatToFloat16(f);
    }

    public static float fromF16(short h) {
        return Float.float16ToFloat(h);
    }

    /** {@code f} rounded through bf16. */
    public static float roundBf16(float f) {
        return fromBf16(toBf16(f));
    }

    public static float roundF16(float f) {
        return fromF16(toF16(f));
    }
}
