package dev.lantern.ir;

/** The type of an SSA value: element type, static shape and layout. Printed as {@code f32[2,4]} or {@code f32[2,4]@[1,2]}. */
public record TensorType(DType dtype, Shape shape, Layout layout) {
    public TensorType {
        layout = layout.normalize(shape);
    }

    public static TensorType of(DType dtype, int... dims) {
        return new TensorType(dtype, Shape.of(dims), Layout.CONTIGUOUS);
    }

    public static TensorType of(DType dtype, Shape shape) {
        return new TensorType(dtype, shape, Layout.CONTIGUOUS);
    }

    public TensorType withShape(Shape s) {
        return new TensorType(dtype, s, Layout.CONTIGUOUS);
    }

    public TensorType withDtype(DType d) {
        return new TensorType(d, shape, layout);
    }

    public TensorType contiguous() {
        return new TensorType(dtype, shape, Layout.CONTIGUOUS);
    }

    public long bytes() {
        return shape.numel() * dtype.bytes();
    }

    @Override
    public String toString() {
        return dtype.text() + shape + layout;
    }
}
