package dev.lantern.ir;

import java.util.Arrays;

/**
 * A static tensor shape. Immutable: the array is copied in and never exposed. Every dimension is
 * &gt;= 0 (zero-size tensors are legal, as in ONNX and PyTorch) and the element count fits in a
 * long; anything else is a {@link TypeException}, so no caller multiplies its way into an overflow.
 */
public final class Shape {
    private final int[] dims;
    private final long numel;

    private Shape(int[] dims) {
        this.dims = dims;
        long n = 1;
        boolean empty = false;
        for (int d : dims) {
            if (d < 0) {
                throw new TypeException("negative dimension in " + Arrays.toString(dims));
            }
            empty |= d == 0;
        }
        if (!empty) {
            try {
                for (int d : dims) {
                    n = Math.multiplyExact(n, d);
                }
            } catch (ArithmeticException e) {
                throw new TypeException("the element count of " + Arrays.toString(dims) + " overflows 64 bits");
            }
        }
        this.numel = empty ? 0 : n;
    }

    public static Shape of(int... dims) {
        return new Shape(dims.clone());
    }

    public static Shape scalar() {
        return new Shape(new int[0]);
    }

    public int rank() {
        return dims.length;
    }

    /** Dimension {@code i}; negative {@code i} counts from the end, as in PyTorch. */
    public int dim(int i) {
        return dims[i < 0 ? dims.length + i : i];
    }

    public int[] dims() {
        return dims.clone();
    }

    public long numel() {
        return numel;
    }

    /** Product of all dimensions but the last: the number of rows of a row-wise op. */
    public long rows() {
        return dims.length == 0 ? 1 : numel() / Math.max(1, dims[dims.length - 1]);
    }

    public int last() {
        return dims.length == 0 ? 1 : dims[dims.length - 1];
    }

    public Shape withDim(int i, int value) {
        int[] d = dims.clone();
        d[i < 0 ? d.length + i : i] = value;
        return new Shape(d);
    }

    /**
     * The permutation that {@code transpose {dim0, dim1}} applies to {@code rank} dims: the
     * identity with the two swapped (negative dims count from the end), e.g. (4, 1, -1) -> [0, 3, 2, 1].
     */
    public static int[] transposePerm(int rank, int dim0, int dim1) {
        int[] p = new int[rank];
        for (int i = 0; i < rank; i++) {
            p[i] = i;
        }
        int a = dim0 < 0 ? dim0 + rank : dim0;
        int b = dim1 < 0 ? dim1 + rank : dim1;
        p[a] = b;
        p[b] = a;
        return p;
    }

    /** Contiguous row-major strides in elements. */
    public long[] contiguousStrides() {
        long[] s = new long[dims.length];
        long acc = 1;
        for (int i = dims.length - 1; i >= 0; i--) {
            s[i] = acc;
            acc *= dims[i];
        }
        return s;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Shape s && Arrays.equals(dims, s.dims);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(dims);
    }

    /** "[2,128,256]", as in the text format. */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < dims.length; i++) {
            if (i > 0) {
                b.append(',');
            }
            b.append(dims[i]);
        }
        return b.append(']').toString();
    }
}
