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

    /**
     * The same elements, in row-major order, under another shape, without a copy: any shape when
     * {@link #isContiguous()}; otherwise only when the strides allow it (a slice's rows split into heads),
     * as {@code torch.Tensor.view} decides. Throws when they do not.
     */
    public View reshape(Shape s) {
        if (s.numel() != shape.numel()) {
            throw new IllegalArgumentException("cannot reshape " + this + " to " + s);
        }
        if (isContiguous()) {
            return of(segment, dtype, offset, s);
        }
        long[] st = inPlaceStrides(s);
        if (st == null) {
            throw new IllegalArgumentException("cannot reshape " + this + " to " + s + " in place");
        }
        return new View(segment, dtype, offset, s, st);
    }

    /**
     * Strides under which {@code s} reads these elements in row-major order, or null when none do: each run
     * of axes that are contiguous among themselves (a chunk) must split or merge into whole axes of {@code s}.
     */
    private long[] inPlaceStrides(Shape s) {
        int rank = shape.rank();
        long[] out = new long[s.rank()];
        int d = s.rank() - 1;
        long base = strides[rank - 1];
        long chunk = 1;
        long viewed = 1;
        for (int a = rank - 1; a >= 0; a--) {
            chunk *= shape.dim(a);
            if (a == 0 || (shape.dim(a - 1) != 1 && strides[a - 1] != chunk * base)) {
                while (d >= 0 && (viewed < chunk || s.dim(d) == 1)) {
                    out[d] = viewed * base;
                    viewed *= s.dim(d);
                    d--;
                }
                if (viewed != chunk) {
                    return null;
                }
                if (a > 0) {
                    base = strides[a - 1];
                    chunk = 1;
                    viewed = 1;
                }
            }
        }
        return d == -1 ? out : null;
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
