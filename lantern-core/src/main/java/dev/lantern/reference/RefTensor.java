package dev.lantern.reference;

import dev.lantern.ir.Shape;

/**
 * A float64 tensor of the reference interpreter: a logical shape and its elements in row-major
 * order ({@code data.length == shape.numel()}). Plain data; the array is shared, not copied.
 */
public record RefTensor(Shape shape, double[] data) {
    public RefTensor {
        if (data.length != shape.numel()) {
            throw new IllegalArgumentException(data.length + " elements for shape " + shape);
        }
    }

    public static RefTensor zeros(Shape shape) {
        return new RefTensor(shape, new double[Math.toIntExact(shape.numel())]);
    }

    /** The element at a multi-index (one entry per axis). */
    public double get(int... index) {
        long[] strides = shape.contiguousStrides();
        long off = 0;
        for (int i = 0; i < index.length; i++) {
            off += index[i] * strides[i];
        }
        return data[(int) off];
    }

    /** The elements as floats, for comparison with an f32 result. */
    public float[] toFloats() {
        float[] f = new float[data.length];
        for (int i = 0; i < f.length; i++) {
            f[i] = (float) data[i];
        }
        return f;
    }
}
