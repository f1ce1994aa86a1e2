package dev.lantern.cpu;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Tensor;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * What every kernel reads and writes: elements of {@code dtype} in {@code segment}, element
 * (i0, i1, ...) at element index {@code offset + Σ i_k·strides[k]}. Offsets and strides count
 * elements, not bytes, so one arena can hold many tensors at different offsets. A stride of 0
 * repeats an element (broadcasting). Views never own memory.
 */
public record View(MemorySegment segment, DType dtype, long offset, Shape shape, long[] strides) {
    public View {
        if (strides.length != shape.rank()) {
            throw new IllegalArgumentException("strides " + Arrays.toString(strides) + " for shape " + shape);
        }
        strides = strides.clone();
    }

    /** The whole tensor, contiguous. */
    public static View of(Tensor t) {
        return new View(t.segment(), t.dtype(), 0, t.shape(), t.shape().contiguousStrides());
    }

    /** A contiguous view of {@code shape} at element {@code offset} of {@code segment}. */
    public static View of(MemorySegment segment, DType dtype, long offset, Shape shape) {
        return new View(segment, dtype, offset, shape, shape.contiguousStrides());
    }

    /** The tensor's storage read with explicit strides (a strided input). */
    public static View strided(Tensor t, Shape shape, long[] strides) {
        return new View(t.segment(), t.dtype(), 0, shape, strides);
    }

    public int rank() {
        return shape.rank();
    }

    public long numel() {
        return shape.numel();
    }

    /** Row-major contiguous with no gaps. */
    public boolean isContiguous() {
        return Arrays.equals(strides, shape.contiguousStrides()) || shape.numel() <= 1;
    }

    /** This view read at the indices of {@code out} (NumPy broadcasting): stride 0 along repeated dims. */
    public View broadcastTo(Shape out) {
        int lead = out.rank() - rank();
        if (lead < 0) {
            throw new IllegalArgumentException("cannot broadcast " + shape + " to " + out);
        }
        long[] s = new long[out.rank()];
        for (int d = lead; d < out.rank(); d++) {
            int own = shape.dim(d - lead);
            if (own != out.dim(d) && own != 1) {
                throw new IllegalArgumentException("cannot broadcast " + shape + " to " + out);
            }
            s[d] = own == 1 && out.dim(d) != 1 ? 0 : strides[d - lead];
        }
        return new View(segment, dtype, offset, out, s);
    }

    /** Axes reordered: result axis i is this view's axis perm[i]. */
    public View permute(int... perm) {
        int[] dims = new int[perm.length];
        long[] s = new long[perm.length];
        for (int i = 0; i < perm.length; i++) {
            dims[i] = shape.dim(perm[i]);
            s[i] = strides[perm[i]];
        }
        return new View(segment, dtype, offset, Shape.of(dims), s);
    }

    /** Elements [start, end) of {@code axis}. */
    public View slice(int axis, int start, int end) {
        return new View(segment, dtype, offset + start * strides[axis], shape.withDim(axis, end - start), strides);
    }

    /** The same contiguous elements under another shape; only valid when {@link #isContiguous()}. */
    public View reshape(Shape s) {
        if (!isContiguous() || s.numel() != shape.numel()) {
            throw new IllegalArgumentException("cannot reshape " + this + " to " + s);
        }
        return of(segment, dtype, offset, s);
    }

    /** Element {@code i} (row-major logical index) as a float: for tests and slow paths. */
    public float getFlat(long i) {
        long off = offset;
        for (int d = rank() - 1; d >= 0; d--) {
            int n = shape.dim(d);
            off += (i % n) * strides[d];
            i /= n;
        }
        return Convert.get(segment, dtype, off);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof View v && segment.equals(v.segment) && dtype == v.dtype && offset == v.offset
                && shape.equals(v.shape) && Arrays.equals(strides, v.strides);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(strides) * 31 + shape.hashCode();
    }

    @Override
    public String toString() {
        return "View(" + dtype + shape + "@" + Arrays.toString(strides) + "+" + offset + ")";
    }
}
