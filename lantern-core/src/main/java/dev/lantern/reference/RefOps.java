package dev.lantern.reference;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Half;

import java.util.List;
import java.util.function.DoubleBinaryOperator;
import java.util.function.DoubleUnaryOperator;

/**
 * The float64 math of every op, written as plain loops over logical row-major indices, for
 * clarity rather than speed. Shapes are the ones the op's type rule produced; no checks repeat it.
 */
final class RefOps {
    private RefOps() {}

    // ---------------------------------------------------------------- elementwise

    static RefTensor unary(RefTensor x, DoubleUnaryOperator f) {
        double[] out = new double[x.data().length];
        for (int i = 0; i < out.length; i++) {
            out[i] = f.applyAsDouble(x.data()[i]);
        }
        return new RefTensor(x.shape(), out);
    }

    /** NumPy broadcasting: dims align from the right, a size-1 (or missing) dim repeats. */
    static RefTensor binary(RefTensor a, RefTensor b, Shape outShape, DoubleBinaryOperator f) {
        int n = Math.toIntExact(outShape.numel());
        long[] sa = broadcastStrides(a.shape(), outShape);
        long[] sb = broadcastStrides(b.shape(), outShape);
        int[] dims = outShape.dims();
        double[] out = new double[n];
        int[] idx = new int[dims.length];
        for (int i = 0; i < n; i++) {
            long ia = 0;
            long ib = 0;
            for (int d = 0; d < dims.length; d++) {
                ia += idx[d] * sa[d];
                ib += idx[d] * sb[d];
            }
            out[i] = f.applyAsDouble(a.data()[(int) ia], b.data()[(int) ib]);
            increment(idx, dims);
        }
        return new RefTensor(outShape, out);
    }

    /** Strides of {@code in} read at the indices of {@code out}: 0 along broadcast dims. */
    static long[] broadcastStrides(Shape in, Shape out) {
        long[] own = in.contiguousStrides();
        long[] s = new long[out.rank()];
        int lead = out.rank() - in.rank();
        for (int d = lead; d < out.rank(); d++) {
            s[d] = in.dim(d - lead) == 1 ? 0 : own[d - lead];
        }
        return s;
    }

    /** Advances a row-major multi-index by one. */
    static void increment(int[] idx, int[] dims) {
        for (int d = dims.length - 1; d >= 0; d--) {
            if (++idx[d] < dims[d]) {
                return;
            }
            idx[d] = 0;
        }
    }

    /** The value {@code x} as stored in {@code to}: cast rounds, which is the op's meaning. */
    static double castValue(double x, DType to) {
        return switch (to) {
            case F32 -> (float) x;
            case BF16 -> Half.roundBf16((float) x);
            case F16 -> Half.roundF16((float) x);
            case I32 -> (int) x;
            case I64 -> (long) x;
            case BOOL -> x != 0 ? 1 : 0;
        };
    }

    // ---------------------------------------------------------------- matmul

    /** a (..., M, K) [or (..., K, M) when ta], b (..., K, N) [or (..., N, K) when tb]; batch dims broadcast. */
    static RefTensor matmul(RefTensor a, RefTensor b, boolean ta, boolean tb, Shape outShape) {
        Shape as = a.shape();
        Shape bs = b.shape();
        int m = outShape.dim(-2);
        int n = outShape.dim(-1);
        int k = ta ? as.dim(-2) : as.dim(-1);
        Shape batch = Shape.of(java.util.Arrays.copyOf(outShape.dims(), outShape.rank() - 2));
        Shape aBatch = Shape.of(java.util.Arrays.copyOf(as.dims(), as.rank() - 2));
        Shape bBatch = Shape.of(java.util.Arrays.copyOf(bs.dims(), bs.rank() - 2));
        long[] sa = broadcastStrides(aBatch, batch);
        long[] sb = broadcastStrides(bBatch, batch);
        int aMat = as.dim(-2) * as.dim(-1);
        int bMat = bs.dim(-2) * bs.dim(-1);
        int batches = Math.toIntExact(batch.numel());
        double[] out = new double[batches * m * n];
        int[] idx = new int[batch.rank()];
        for (int bi = 0; bi < batches; bi++) {
            long oa = 0;
            long ob = 0;
            for (int d = 0; d < idx.length; d++) {
                oa += idx[d] * sa[d];
                ob += idx[d] * sb[d];
            }
            int baseA = (int) oa * aMat;
            int baseB = (int) ob * bMat;
            for (int i = 0; i < m; i++) {
                int row = (bi * m + i) * n;
                if (tb) {
                    for (int j = 0; j < n; j++) {
                        double acc = 0;
                        for (int p = 0; p < k; p++) {
                            acc += a.data()[baseA + (ta ? p * m + i : i * k + p)] * b.data()[baseB + j * k + p];
                        }
                        out[row + j] = acc;
                    }
                } else {
                    // the same sum in the same order (p ascending from 0.0) for every out[i, j], with
                    // b read along its rows: a strided walk down b's columns made large n slow
                    for (int p = 0; p < k; p++) {
                        double av = a.data()[baseA + (ta ? p * m + i : i * k + p)];
                        int bRow = baseB + p * n;
                        for (int j = 0; j < n; j++) {
                            out[row + j] += av * b.data()[bRow + j];
                        }
                    }
                }
            }
            increment(idx, batch.dims());
        }
        return new RefTensor(outShape, out);
    }

    // ---------------------------------------------------------------- row-wise

    /** softmax(scale·x) over the last axis; causal masks key j > query i (i = index on axis -2). */
    static RefTensor softmax(RefTensor x, double scale, boolean causal) {
        int t = x.shape().last();
        int s = x.shape().rank() >= 2 ? x.shape().dim(-2) : 1;
        double[] out = new double[x.data().length];
        int rows = x.data().length / Math.max(1, t);
        for (int r = 0; r < rows; r++) {
            int qi = r % s;
            int limit = causal ? Math.min(t, qi + 1) : t;
            double max = Double.NEGATIVE_INFINITY;
            for (int j = 0; j < limit; j++) {
                max = Math.max(max, scale * x.data()[r * t + j]);
            }
            double sum = 0;
            for (int j = 0; j < limit; j++) {
                double e = Math.exp(scale * x.data()[r * t + j] - max);
                out[r * t + j] = e;
                sum += e;
            }
            for (int j = 0; j < t; j++) {
                out[r * t + j] = j < limit ? out[r * t + j] / sum : 0;
            }
        }
        return new RefTensor(x.shape(), out);
    }

    /** (x - mean) / sqrt(var + eps) · w (+ b) over the last axis; biased variance. */
    static RefTensor layerNorm(RefTensor x, RefTensor w, RefTensor b, double eps) {
        int d = x.shape().last();
        double[] out = new double[x.data().length];
        for (int r = 0; r < out.length / d; r++) {
            double mean = 0;
            for (int j = 0; j < d; j++) {
                mean += x.data()[r * d + j];
            }
            mean /= d;
            double var = 0;
            for (int j = 0; j < d; j++) {
                double c = x.data()[r * d + j] - mean;
                var += c * c;
            }
            var /= d;
            double inv = 1 / Math.sqrt(var + eps);
            for (int j = 0; j < d; j++) {
                out[r * d + j] = (x.data()[r * d + j] - mean) * inv * w.data()[j] + (b == null ? 0 : b.data()[j]);
            }
        }
        return new RefTensor(x.shape(), out);
    }

    /** x / sqrt(mean(x²) + eps) · w over the last axis. */
    static RefTensor rmsNorm(RefTensor x, RefTensor w, double eps) {
        int d = x.shape().last();
        double[] out = new double[x.data().length];
        for (int r = 0; r < out.length / d; r++) {
            double ms = 0;
            for (int j = 0; j < d; j++) {
                ms += x.data()[r * d + j] * x.data()[r * d + j];
            }
            double inv = 1 / Math.sqrt(ms / d + eps);
            for (int j = 0; j < d; j++) {
                out[r * d + j] = x.data()[r * d + j] * inv * w.data()[j];
            }
        }
        return new RefTensor(x.shape(), out);
    }

    /**
     * Rotate-half RoPE on x (batch, heads, seq, d): for i < d/2, θ_i = base^(-2i/d), angle =
     * (pos + offset)·θ_i; out[i] = x[i]cos − x[i+d/2]sin, out[i+d/2] = x[i+d/2]cos + x[i]sin.
     */
    static RefTensor rope(RefTensor x, double base, long offset) {
        return rope(x, base, offset, false);
    }

    /** As {@link #rope(RefTensor, double, long)}, by −angle when {@code inverse} (rope's transpose). */
    static RefTensor rope(RefTensor x, double base, long offset, boolean inverse) {
        int d = x.shape().dim(3);
        int seq = x.shape().dim(2);
        int half = d / 2;
        double[] out = new double[x.data().length];
        for (int r = 0; r < (d == 0 ? 0 : out.length / d); r++) { // d = 0: an empty head, nothing to turn
            int pos = r % seq;
            for (int i = 0; i < half; i++) {
                double angle = (pos + offset) * Math.pow(base, -2.0 * i / d);
                double c = Math.cos(angle);
                double s = inverse ? -Math.sin(angle) : Math.sin(angle);
                double x0 = x.data()[r * d + i];
                double x1 = x.data()[r * d + i + half];
                out[r * d + i] = x0 * c - x1 * s;
                out[r * d + i + half] = x1 * c + x0 * s;
            }
        }
        return new RefTensor(x.shape(), out);
    }

    // ---------------------------------------------------------------- movement

    /** out[o] = in[i] with i[perm[a]] = o[a]. */
    static RefTensor permute(RefTensor x, int[] perm, Shape outShape) {
        long[] inStrides = x.shape().contiguousStrides();
        int[] dims = outShape.dims();
        int n = x.data().length;
        double[] out = new double[n];
        int[] idx = new int[dims.length];
        for (int o = 0; o < n; o++) {
            long off = 0;
            for (int a = 0; a < dims.length; a++) {
                off += idx[a] * inStrides[perm[a]];
            }
            out[o] = x.data()[(int) off];
            increment(idx, dims);
        }
        return new RefTensor(outShape, out);
    }

    static RefTensor slice(RefTensor x, int axis, int start, Shape outShape) {
        long[] inStrides = x.shape().contiguousStrides();
        int[] dims = outShape.dims();
        double[] out = new double[Math.toIntExact(outShape.numel())];
        int[] idx = new int[dims.length];
        for (int o = 0; o < out.length; o++) {
            long off = (long) start * inStrides[axis];
            for (int a = 0; a < dims.length; a++) {
                off += idx[a] * inStrides[a];
            }
            out[o] = x.data()[(int) off];
            increment(idx, dims);
        }
        return new RefTensor(outShape, out);
    }

    static RefTensor concat(List<RefTensor> parts, int axis, Shape outShape) {
        double[] out = new double[Math.toIntExact(outShape.numel())];
        long[] outStrides = outShape.contiguousStrides();
        int base = 0;
        for (RefTensor p : parts) {
            int[] dims = p.shape().dims();
            int[] idx = new int[dims.length];
            for (int i = 0; i < p.data().length; i++) {
                long off = (long) base * outStrides[axis];
                for (int a = 0; a < dims.length; a++) {
                    off += idx[a] * outStrides[a];
                }
                out[(int) off] = p.data()[i];
                increment(idx, dims);
            }
            base += p.shape().dim(axis);
        }
        return new RefTensor(outShape, out);
    }

    /**
     * numpy.take(table, ids, axis): {@code (outer, n, inner)} → {@code (outer, ids, inner)}. Ids are exact
     * integers in float64; every id is checked before any row is read.
     */
    static RefTensor gather(RefTensor table, RefTensor ids, int axis, Shape outShape) {
        int[] dims = table.shape().dims();
        int n = dims[axis];
        long outer = 1;
        long inner = 1;
        for (int a = 0; a < dims.length; a++) {
            if (a < axis) {
                outer *= dims[a];
            } else if (a > axis) {
                inner *= dims[a];
            }
        }
        int count = ids.data().length;
        long[] rows = new long[count];
        for (int i = 0; i < count; i++) {
            rows[i] = dev.lantern.ir.IndexOutOfRangeException.wrap((long) ids.data()[i], n, i, "gather along axis " + axis + " of " + table.shape());
        }
        double[] out = new double[Math.toIntExact(outShape.numel())];
        int o = 0;
        for (long b = 0; b < outer; b++) {
            for (int i = 0; i < count; i++) {
                long src = (b * n + rows[i]) * inner;
                for (long e = 0; e < inner; e++) {
                    out[o++] = table.data()[(int) (src + e)];
                }
            }
        }
        return new RefTensor(outShape, out);
    }

    // ---------------------------------------------------------------- attention

    /**
     * softmax(scale·q·kᵀ, causal)·v with q (b,h,s,d), k (b,hk,t,d), v (b,hk,t,e): query head i reads
     * K/V head i / (h / hk) (grouped-query attention; hk = h is plain attention). {@code mask}, null or
     * rank 4 broadcast to (b,h,s,t), is added to the scaled scores.
     */
    static RefTensor attention(RefTensor q, RefTensor k, RefTensor v, RefTensor mask, double scale, boolean causal, Shape outShape) {
        int h = q.shape().dim(1);
        int hk = k.shape().dim(1);
        int bh = q.shape().dim(0) * h;
        int s = q.shape().dim(2);
        int d = q.shape().dim(3);
        int t = k.shape().dim(2);
        int e = v.shape().dim(3);
        double[] out = new double[bh * s * e];
        double[] p = new double[t];
        long[] ms = mask == null ? null : broadcastStrides(mask.shape(), Shape.of(q.shape().dim(0), h, s, t));
        for (int g = 0; g < bh; g++) {
            int kv = g / h * hk + g % h / (h / hk); // (batch, K/V head) of query (batch, head) g
            for (int i = 0; i < s; i++) {
                int limit = causal ? Math.min(t, i + 1) : t;
                double max = Double.NEGATIVE_INFINITY;
                for (int j = 0; j < limit; j++) {
                    double dot = 0;
                    for (int c = 0; c < d; c++) {
                        dot += q.data()[(g * s + i) * d + c] * k.data()[(kv * t + j) * d + c];
                    }
                    p[j] = scale * dot + (ms == null ? 0 : mask.data()[(int) (g / h * ms[0] + g % h * ms[1] + i * ms[2] + j * ms[3])]);
                    max = Math.max(max, p[j]);
                }
                double sum = 0;
                for (int j = 0; j < limit; j++) {
                    p[j] = Math.exp(p[j] - max);
                    sum += p[j];
                }
                for (int c = 0; c < e; c++) {
                    double acc = 0;
                    for (int j = 0; j < limit; j++) {
                        acc += p[j] * v.data()[(kv * t + j) * e + c];
                    }
                    out[(g * s + i) * e + c] = acc / sum;
                }
            }
        }
        return new RefTensor(outShape, out);
    }
}
