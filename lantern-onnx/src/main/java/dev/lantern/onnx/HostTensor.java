package dev.lantern.onnx;

import java.util.Arrays;

/**
 * A tensor whose value is known at import time: shapes, indices, small constants, masks. Values are held as
 * doubles whatever the ONNX type, which is exact for every float type and for integers up to 2^53 (the
 * int64 sentinels exporters write, such as INT64_MAX as a Slice end, saturate back to themselves).
 *
 * @param elemType the ONNX element type (TensorProto.DataType number)
 * @param dims     the shape
 * @param values   row-major values, {@code numel(dims)} of them
 */
public record HostTensor(int elemType, long[] dims, double[] values) {
    public HostTensor {
        dims = dims.clone();
        if (numel(dims) != values.length) {
            throw new IllegalArgumentException(values.length + " values for shape " + Arrays.toString(dims));
        }
    }

    public static HostTensor scalar(int elemType, double v) {
        return new HostTensor(elemType, new long[0], new double[] {v});
    }

    public static HostTensor vector(int elemType, long... v) {
        double[] d = new double[v.length];
        for (int i = 0; i < v.length; i++) {
            d[i] = v[i];
        }
        return new HostTensor(elemType, new long[] {v.length}, d);
    }

    public int rank() {
        return dims.length;
    }

    public long numel() {
        return values.length;
    }

    @Override
    public long[] dims() {
        return dims.clone();
    }

    /** The values as longs (saturating), for shapes, axes and indices. */
    public long[] longs() {
        long[] r = new long[values.length];
        for (int i = 0; i < r.length; i++) {
            r[i] = (long) values[i];
        }
        return r;
    }

    public double scalarValue() {
        if (values.length != 1) {
            throw new OnnxImportException("expected a single value, found a tensor of shape " + Arrays.toString(dims));
        }
        return values[0];
    }

    public HostTensor withDims(long[] newDims) {
        return new HostTensor(elemType, newDims, values);
    }

    static long numel(long[] dims) {
        long n = 1;
        for (long d : dims) {
            n = Math.multiplyExact(n, d);
        }
        return n;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof HostTensor h && elemType == h.elemType && Arrays.equals(dims, h.dims) && Arrays.equals(values, h.values);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(dims) * 31 + Arrays.hashCode(values);
    }

    @Override
    public String toString() {
        return "HostTensor(" + elemType + Arrays.toString(dims) + (values.length <= 8 ? " " + Arrays.toString(values) : "") + ")";
    }
}
