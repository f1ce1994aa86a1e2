package dev.lantern.tensor;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.ir.TensorType;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * A dense, contiguous, row-major host tensor over an off-heap segment (64-byte aligned, so that
 * Vector API loads are aligned and the bytes can go to a GPU as they are). Elements are read and
 * written as float whatever the storage dtype; bf16 and f16 round to nearest even on write.
 */
public final class Tensor {
    static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final DType dtype;
    private final Shape shape;
    private final MemorySegment data;

    private Tensor(DType dtype, Shape shape, MemorySegment data) {
        this.dtype = dtype;
        this.shape = shape;
        this.data = data;
    }

    /** A new tensor of unspecified (zeroed) contents. */
    public static Tensor allocate(DType dtype, Shape shape) {
        long bytes = Math.max(1, shape.numel() * dtype.bytes());
        return new Tensor(dtype, shape, Arena.ofAuto().allocate(bytes, 64));
    }

    public static Tensor allocate(TensorType t) {
        return allocate(t.dtype(), t.shape());
    }

    /** A tensor viewing {@code data}, which must hold {@code shape.numel()} elements of {@code dtype}. */
    public static Tensor wrap(DType dtype, Shape shape, MemorySegment data) {
        if (data.byteSize() < shape.numel() * dtype.bytes()) {
            throw new IllegalArgumentException("segment of " + data.byteSize() + " bytes is too small for " + dtype + shape);
        }
        return new Tensor(dtype, shape, data);
    }

    public static Tensor of(DType dtype, Shape shape, float[] values) {
        if (values.length != shape.numel()) {
            throw new IllegalArgumentException(values.length + " values for shape " + shape);
        }
        Tensor t = allocate(dtype, shape);
        for (int i = 0; i < values.length; i++) {
            t.set(i, values[i]);
        }
        return t;
    }

    public DType dtype() {
        return dtype;
    }

    public Shape shape() {
        return shape;
    }

    public TensorType type() {
        return TensorType.of(dtype, shape);
    }

    public long numel() {
        return shape.numel();
    }

    public MemorySegment segment() {
        return data;
    }

    public float get(long i) {
        return switch (dtype) {
            case F32 -> data.getAtIndex(F32, i);
            case BF16 -> Half.fromBf16(data.getAtIndex(I16, i));
            case F16 -> Half.fromF16(data.getAtIndex(I16, i));
            case I32 -> data.getAtIndex(I32, i);
            case I64 -> data.getAtIndex(I64, i);
            case BOOL -> data.get(ValueLayout.JAVA_BYTE, i) != 0 ? 1f : 0f;
        };
    }

    public void set(long i, float v) {
        switch (dtype) {
            case F32 -> data.setAtIndex(F32, i, v);
            case BF16 -> data.setAtIndex(I16, i, Half.toBf16(v));
            case F16 -> data.setAtIndex(I16, i, Half.toF16(v));
            case I32 -> data.setAtIndex(I32, i, (int) v);
            case I64 -> data.setAtIndex(I64, i, (long) v);
            case BOOL -> data.set(ValueLayout.JAVA_BYTE, i, (byte) (v != 0 ? 1 : 0));
        }
    }

    /** All elements as floats (a copy). */
    public float[] toFloats() {
        if (numel() > Integer.MAX_VALUE - 8) {
            throw new IllegalStateException("tensor too large for an array: " + shape);
        }
        float[] r = new float[(int) numel()];
        if (dtype == DType.F32) {
            MemorySegment.copy(data, F32, 0, r, 0, r.length);
        } else {
            for (int i = 0; i < r.length; i++) {
                r[i] = get(i);
            }
        }
        return r;
    }

    /** All elements as doubles, for references; integers exactly (an i64 id past 2^24 is not a float). */
    public double[] toDoubles() {
        if (dtype == DType.I64 || dtype == DType.I32) {
            double[] r = new double[Math.toIntExact(numel())];
            for (int i = 0; i < r.length; i++) {
                r[i] = dtype == DType.I64 ? data.getAtIndex(I64, i) : data.getAtIndex(I32, i);
            }
            return r;
        }
        float[] f = toFloats();
        double[] r = new double[f.length];
        for (int i = 0; i < f.length; i++) {
            r[i] = f[i];
        }
        return r;
    }

    /** Fills every element with NaN (floating) or a sentinel, so that an unwritten output shows. */
    public Tensor poison() {
        for (long i = 0; i < numel(); i++) {
            set(i, dtype.isFloating() ? Float.NaN : -77);
        }
        return this;
    }

    /** A copy converted to {@code to}. */
    public Tensor cast(DType to) {
        Tensor t = allocate(to, shape);
        for (long i = 0; i < numel(); i++) {
            t.set(i, get(i));
        }
        return t;
    }

    public Tensor reshape(Shape s) {
        if (s.numel() != shape.numel()) {
            throw new IllegalArgumentException("reshape " + shape + " to " + s);
        }
        return new Tensor(dtype, s, data);
    }

    @Override
    public String toString() {
        return "Tensor(" + dtype + shape + ")";
    }
}
