package dev.lantern.weights;

import dev.lantern.ir.Shape;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * A tensor of a safetensors file: its entry and a read-only view of its bytes (row-major,
 * little-endian) in the mapped file. Nothing is copied: the view lives as long as the
 * {@link SafetensorsFile} it came from, and reading it after that file is closed throws
 * {@link IllegalStateException}. The view need not be aligned to the element size (a file whose
 * header length is not a multiple of 8 shifts every tensor), so read it with unaligned layouts.
 */
public record TensorView(TensorInfo info, MemorySegment data) {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    public String name() {
        return info.name();
    }

    public SafetensorsDType dtype() {
        return info.dtype();
    }

    public long[] shape() {
        return info.shape();
    }

    public Shape irShape() {
        return info.irShape();
    }

    public long numel() {
        return info.numel();
    }

    /**
     * The elements widened to f32 in a new array (f32, f16, bf16; f64 rounded to nearest), for
     * loaders that compute in f32. The one copy a caller makes on purpose.
     *
     * @throws SafetensorsException {@code UNKNOWN_DTYPE} for a non-float dtype, {@code SIZE_OVERFLOW}
     *     past {@code Integer.MAX_VALUE - 8} elements
     */
    public float[] toFloatArray() {
        long n = numel();
        if (n > Integer.MAX_VALUE - 8) {
            throw new SafetensorsException(SafetensorsException.Kind.SIZE_OVERFLOW,
                    "tensor " + JsonParser.quoteForMessage(name()) + " has " + n + " elements, too many for a Java array");
        }
        float[] out = new float[(int) n];
        switch (dtype()) {
            case F32 -> MemorySegment.copy(data, F32, 0, out, 0, out.length);
            case F16 -> {
                for (int i = 0; i < out.length; i++) {
                    out[i] = Float.float16ToFloat(data.get(U16, 2L * i));
                }
            }
            case BF16 -> {
                for (int i = 0; i < out.length; i++) {
                    out[i] = Float.intBitsToFloat((data.get(U16, 2L * i) & 0xFFFF) << 16);
                }
            }
            case F64 -> {
                for (int i = 0; i < out.length; i++) {
                    out[i] = (float) data.get(F64, 8L * i);
                }
            }
            default -> throw new SafetensorsException(SafetensorsException.Kind.UNKNOWN_DTYPE,
                    "tensor " + JsonParser.quoteForMessage(name()) + " is " + dtype() + ", not a float type");
        }
        return out;
    }
}
