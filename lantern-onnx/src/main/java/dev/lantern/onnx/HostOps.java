package dev.lantern.onnx;

import java.util.Arrays;
import java.util.List;
import java.util.function.DoubleBinaryOperator;
import java.util.function.DoubleUnaryOperator;

/**
 * Computations on {@link HostTensor}s at import time: the constant folding of shape arithmetic and masks.
 * Results are rounded to their ONNX element type, so that folding gives what a runtime would.
 */
final class HostOps {
    private final long limit;
    private long used;

    /**
     * {@code limit}: the most elements a folded result may have, and a quarter of what all folds of one
     * import may allocate together; larger ones are refused before allocation.
     */
    HostOps(long limit) {
        this.limit = limit;
    }

    /** A zeroed array for a folded value of shape {@code dims}, counted against the limits. */
    double[] alloc(long[] dims) {
        long n;
        try {
            n = HostTensor.numel(dims);
        } catch (ArithmeticException e) {
            n = Long.MAX_VALUE;
        }
        if (n > limit) {
            throw new OnnxImportException("a folded value of shape " + Arrays.toString(dims) + " is too large to compute at import time (limit "
                    + limit + " elements)");
        }
        used += n;
        if (used > 4 * limit) {
            throw new OnnxImportException("the values folded at import time exceed " + 4 * limit + " elements in all");
        }
        return new double[(int) n];
    }

    /** NumPy broadcasting of shapes. */
    static long[] broadcast(List<long[]> shapes) {
        int rank = shapes.stream().mapToInt(s -> s.length).max().orElse(0);
        long[] out = new long[rank];
        Arrays.fill(out, 1);
        for (long[] s : shapes) {
            for (int i = 0; i < s.length; i++) {
                int o = rank - s.length + i;
                if (s[i] != 1) {
                    if (out[o] != 1 && out[o] != s[i]) {
                        throw new OnnxImportException("shapes " + shapes.stream().map(Arrays::toString).toList() + " do not broadcast");
                    }
                    out[o] = s[i];
                }
            }
        }
        return out;
    }

    /** {@code fn} over the broadcast elements of {@code in}, as elements of type {@code outType}. */
    HostTensor map(List<HostTensor> in, int outType, Fn fn) {
        return mapTo(in, broadcast(in.stream().map(HostTensor::dims).toList()), outType, fn);
    }

    /** As {@link #map}, onto {@code dims}, to which every input must broadcast (Expand). */
    HostTensor mapTo(List<HostTensor> in, long[] dims, int outType, Fn fn) {
        double[] out = alloc(dims);
        int n = out.length;
        long[][] strides = new long[in.size()][];
        for (int k = 0; k < in.size(); k++) {
            strides[k] = broadcastStrides(in.get(k).dims(), dims);
        }
        double[] args = new double[in.size()];
        long[] idx = new long[dims.length];
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < args.length; k++) {
                long off = 0;
                for (int d = 0; d < dims.length; d++) {
                    off += idx[d] * strides[k][d];
                }
                args[k] = in.get(k).values()[(int) off];
            }
            out[i] = OnnxTypes.round(outType, fn.apply(args));
            for (int d = dims.length - 1; d >= 0 && ++idx[d] == dims[d]; d--) {
                idx[d] = 0;
            }
        }
        return new HostTensor(outType, dims, out);
    }

    HostTensor map2(HostTensor a, HostTensor b, int outType, DoubleBinaryOperator f) {
        return map(List.of(a, b), outType, v -> f.applyAsDouble(v[0], v[1]));
    }

    HostTensor map1(HostTensor a, int outType, DoubleUnaryOperator f) {
        double[] out = alloc(a.dims());
        for (int i = 0; i < out.length; i++) {
            out[i] = OnnxTypes.round(outType, f.applyAsDouble(a.values()[i]));
        }
        return new HostTensor(outType, a.dims(), out);
    }

    /** Row-major strides of {@code shape} aligned to {@code to}, 0 where the shape broadcasts. */
    private static long[] broadcastStrides(long[] shape, long[] to) {
        long[] s = new long[to.length];
        long acc = 1;
        for (int i = shape.length - 1; i >= 0; i--) {
            s[to.length - shape.length + i] = shape[i] == 1 ? 0 : acc;
            acc *= shape[i];
        }
        return s;
    }

    /** The elements along {@code axis} taken at {@code indices} (negative indices count from the end). */
    HostTensor gather(HostTensor data, HostTensor indices, int axis) {
        long[] d = data.dims();
        long outer = 1;
        for (int i = 0; i < axis; i++) {
            outer *= d[i];
        }
        long inner = 1;
        for (int i = axis + 1; i < d.length; i++) {
            inner *= d[i];
        }
        long[] idx = indices.longs();
        long[] outDims = new long[d.length - 1 + indices.rank()];
        System.arraycopy(d, 0, outDims, 0, axis);
        System.arraycopy(indices.dims(), 0, outDims, axis, indices.rank());
        System.arraycopy(d, axis + 1, outDims, axis + indices.rank(), d.length - axis - 1);
        double[] out = alloc(outDims);
        if (out.length == 0) {
            return new HostTensor(data.elemType(), outDims, out); // no loop over the outer dims of an empty result
        }
        int o = 0;
        for (long b = 0; b < outer; b++) {
            for (long k : idx) {
                long j = k < 0 ? k + d[axis] : k;
                if (j < 0 || j >= d[axis]) {
                    throw new OnnxImportException("Gather index " + k + " is outside axis " + axis + " of " + Arrays.toString(d));
                }
                long base = (b * d[axis] + j) * inner;
                for (long e = 0; e < inner; e++) {
                    out[o++] = data.values()[(int) (base + e)];
                }
            }
        }
        return new HostTensor(data.elemType(), outDims, out);
    }

    /** Elements [start, end) with step along one axis (bounds already clamped). */
    HostTensor slice(HostTensor x, int axis, long start, long end, long step) {
        long[] d = x.dims();
        long count = step > 0 ? (end > start ? Math.ceilDiv(end - start, step) : 0)
                : (start > end ? Math.ceilDiv(start - end, step == Long.MIN_VALUE ? Long.MAX_VALUE : -step) : 0);
        long[] outDims = d.clone();
        outDims[axis] = count;
        long outer = 1;
        for (int i = 0; i < axis; i++) {
            outer *= d[i];
        }
        long inner = 1;
        for (int i = axis + 1; i < d.length; i++) {
            inner *= d[i];
        }
        double[] out = alloc(outDims);
        if (out.length == 0) {
            return new HostTensor(x.elemType(), outDims, out);
        }
        int o = 0;
        for (long b = 0; b < outer; b++) {
            for (long k = 0; k < count; k++) {
                long base = (b * d[axis] + start + k * step) * inner;
                for (long e = 0; e < inner; e++) {
                    out[o++] = x.values()[(int) (base + e)];
                }
            }
        }
        return new HostTensor(x.elemType(), outDims, out);
    }

    HostTensor concat(List<HostTensor> in, int axis) {
        long[] first = in.getFirst().dims();
        long[] outDims = first.clone();
        outDims[axis] = 0;
        for (HostTensor t : in) {
            long[] d = t.dims();
            if (d.length != first.length) {
                throw new OnnxImportException("Concat inputs differ in rank: " + Arrays.toString(first) + " and " + Arrays.toString(d));
            }
            for (int i = 0; i < d.length; i++) {
                if (i != axis && d[i] != first[i]) {
                    throw new OnnxImportException("Concat inputs differ off axis " + axis + ": " + Arrays.toString(first) + " and " + Arrays.toString(d));
                }
            }
            outDims[axis] += d[axis];
        }
        long outer = 1;
        for (int i = 0; i < axis; i++) {
            outer *= first[i];
        }
        double[] out = alloc(outDims);
        if (out.length == 0) {
            return new HostTensor(in.getFirst().elemType(), outDims, out);
        }
        int o = 0;
        for (long b = 0; b < outer; b++) {
            for (HostTensor t : in) {
                int chunk = (int) (t.numel() / Math.max(1, outer));
                System.arraycopy(t.values(), (int) (b * chunk), out, o, chunk);
                o += chunk;
            }
        }
        return new HostTensor(in.getFirst().elemType(), outDims, out);
    }

    HostTensor transpose(HostTensor x, int[] perm) {
        long[] d = x.dims();
        long[] outDims = new long[d.length];
        for (int i = 0; i < d.length; i++) {
            outDims[i] = d[perm[i]];
        }
        long[] inStrides = new long[d.length];
        long acc = 1;
        for (int i = d.length - 1; i >= 0; i--) {
            inStrides[i] = acc;
            acc *= d[i];
        }
        double[] out = alloc(outDims);
        long[] idx = new long[d.length];
        for (int i = 0; i < out.length; i++) {
            long off = 0;
            for (int k = 0; k < d.length; k++) {
                off += idx[k] * inStrides[perm[k]];
            }
            out[i] = x.values()[(int) off];
            for (int k = d.length - 1; k >= 0 && ++idx[k] == outDims[k]; k--) {
                idx[k] = 0;
            }
        }
        return new HostTensor(x.elemType(), outDims, out);
    }

    /** A function of the broadcast elements. */
    @FunctionalInterface
    interface Fn {
        double apply(double[] args);
    }
}
