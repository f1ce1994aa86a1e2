package dev.lantern.ir;

/** The type of an SSA value: element type, static shape and layout. Printed as {@code f32[2,4]} or {@code f32[2,4]@[1,2]}. */
public record TensorType(DType dtype, Shape shape, Layout layout) {
    /**
     * The most bytes one tensor may hold: 2^40 (1 TiB), some 7x the memory of the largest GPU and
     * far past any real activation or weight. A type over it is refused where it is written, not
     * planned into an arena that no allocator can give.
     */
    public static final long MAX_BYTES = 1L << 40;

    public TensorType {
        layout = layout.normalize(shape);
        if (shape.numel() > MAX_BYTES / dtype.bytes()) {
            throw new TypeException(dtype.text() + shape + " holds " + shape.numel() + " elements of " + dtype.bytes()
                    + " bytes, over the limit of " + MAX_BYTES + " bytes (2^40) per tensor");
        }
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
