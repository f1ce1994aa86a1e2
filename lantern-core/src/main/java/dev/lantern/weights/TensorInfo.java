package dev.lantern.weights;

import dev.lantern.ir.Shape;

import java.util.Arrays;

/**
 * One tensor's entry in a validated safetensors header: its bytes are {@code [begin, end)} of the
 * data section (which starts right after the header), row-major, little-endian.
 * Invariant (checked by {@link SafetensorsHeader}): {@code end - begin == numel * dtype.bytes()}.
 */
public record TensorInfo(String name, SafetensorsDType dtype, long[] shape, long begin, long end) {
    public TensorInfo {
        shape = shape.clone();
    }

    @Override
    public long[] shape() {
        return shape.clone();
    }

    public int rank() {
        return shape.length;
    }

    /** Bytes of data, {@code end - begin}. */
    public long byteSize() {
        return end - begin;
    }

    /** Number of elements: the byte size over the element size (exact by the header's invariant). */
    public long numel() {
        return byteSize() / dtype.bytes();
    }

    /**
     * The shape as Lantern's IR {@link Shape}, whose dimensions are ints.
     *
     * @throws SafetensorsException {@code BAD_SHAPE} when a dimension is over {@code Integer.MAX_VALUE}
     */
    public Shape irShape() {
        int[] d = new int[shape.length];
        for (int i = 0; i < d.length; i++) {
            if (shape[i] > Integer.MAX_VALUE) {
                throw new SafetensorsException(SafetensorsException.Kind.BAD_SHAPE,
                        "tensor " + JsonParser.quoteForMessage(name) + ": dimension " + shape[i] + " does not fit an IR shape");
            }
            d[i] = (int) shape[i];
        }
        return Shape.of(d);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TensorInfo t && name.equals(t.name) && dtype == t.dtype && Arrays.equals(shape, t.shape)
                && begin == t.begin && end == t.end;
    }

    @Override
    public int hashCode() {
        return name.hashCode() * 31 + Arrays.hashCode(shape);
    }

    @Override
    public String toString() {
        return name + ": " + dtype + Arrays.toString(shape) + " @ [" + begin + ", " + end + ")";
    }
}
