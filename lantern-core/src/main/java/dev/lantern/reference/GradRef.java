package dev.lantern.reference;

import dev.lantern.ir.IndexOutOfRangeException;
import dev.lantern.ir.Shape;

/**
 * float64 meaning of the reductions, the loss and the gradient helpers that autodiff emits
 * (reduce_sum, cross_entropy and its gradient, softmax_grad, the norms' dx, scatter_add), written
 * from their definitions as plain loops, as {@link RefOps} writes the forward ops.
 */
final class GradRef {
    private GradRef() {}

    /** Σ over the axes marked {@code reduced}; out holds the kept axes in row-major order. */
    static RefTensor reduceSum(RefTensor x, boolean[] reduced, Shape outShape) {
        int[] dims = x.shape().dims();
        long[] outStrides = new long[dims.length];
        long acc = 1;
        for (int a = dims.length - 1; a >= 0; a--) {
            if (!reduced[a]) {
                outStrides[a] = acc;
                acc *= dims[a];
            }
        }
        double[] out = new double[Math.toIntExact(outShape.numel())];
        int[] idx = new int[dims.length];
        for (int i = 0; i < x.data().length; i++) {
            long o = 0;
            for (int a = 0; a < dims.length; a++) {
                o += idx[a] * outStrides[a];
            }
            out[(int) o] += x.data()[i];
            RefOps.increment(idx, dims);
        }
        return new RefTensor(outShape, out);
    }

    /** scale · y · (dy − Σ_row y·dy). */
    static RefTensor softmaxGrad(RefTensor y, RefTensor dy, double scale) {
        int t = y.shape().last();
        double[] out = new double[y.data().length];
        for (int r = 0; r < out.length / Math.max(1, t); r++) {
            double dot = 0;
            for (int j = 0; j < t; j++) {
                dot += y.data()[r * t + j] * dy.data()[r * t + j];
            }
            for (int j = 0; j < t; j++) {
                out[r * t + j] = scale * y.data()[r * t + j] * (dy.data()[r * t + j] - dot);
            }
        }
        return new RefTensor(y.shape(), out);
    }

    /**
     * dx of x̂·w (+ b), x̂ = (x − μ)/σ (μ = 0 for rms): (1/σ)·(g − mean(g) − x̂·mean(g·x̂)), g = w·dy;
     * plus {@code res} (the residual form) when it is not null.
     */
    static RefTensor normGrad(RefTensor x, RefTensor w, RefTensor dy, RefTensor res, double eps, boolean centre) {
        int d = x.shape().last();
        double[] out = new double[x.data().length];
        double[] xh = new double[d];
        double[] g = new double[d];
        for (int r = 0; r < out.length / d; r++) {
            double mean = 0;
            if (centre) {
                for (int j = 0; j < d; j++) {
                    mean += x.data()[r * d + j];
                }
                mean /= d;
            }
            double var = 0;
            for (int j = 0; j < d; j++) {
                double c = x.data()[r * d + j] - mean;
                var += c * c;
            }
            double inv = 1 / Math.sqrt(var / d + eps);
            double gMean = 0;
            double gx = 0;
            for (int j = 0; j < d; j++) {
                xh[j] = (x.data()[r * d + j] - mean) * inv;
                g[j] = w.data()[j] * dy.data()[r * d + j];
                gMean += g[j];
                gx += g[j] * xh[j];
            }
            gMean = centre ? gMean / d : 0;
            gx /= d;
            for (int j = 0; j < d; j++) {
                out[r * d + j] = inv * (g[j] - gMean - xh[j] * gx) + (res == null ? 0 : res.data()[r * d + j]);
            }
        }
        return new RefTensor(x.shape(), out);
    }

    /** Mean over non-ignored tokens of logsumexp(x) − x[t]. */
    static RefTensor crossEntropy(RefTensor logits, RefTensor targets, long ignore) {
        int v = logits.shape().last();
        double sum = 0;
        long count = 0;
        for (int r = 0; r < targets.data().length; r++) {
            long t = target(targets, r, v, ignore);
            if (t >= 0) {
                sum += logSumExp(logits.data(), r * v, v) - logits.data()[r * v + (int) t];
                count++;
            }
        }
        return new RefTensor(Shape.scalar(), new double[] {sum / count});
    }

    /** (softmax(x) − onehot(t)) · dloss / count, 0 on ignored tokens. */
    static RefTensor crossEntropyGrad(RefTensor logits, RefTensor targets, RefTensor dloss, long ignore) {
        int v = logits.shape().last();
        int rows = targets.data().length;
        long[] t = new long[rows];
        long count = 0;
        for (int r = 0; r < rows; r++) {
            t[r] = target(targets, r, v, ignore);
            count += t[r] >= 0 ? 1 : 0;
        }
        double scale = dloss.data()[0] / count;
        double[] out = new double[logits.data().length];
        for (int r = 0; r < rows; r++) {
            if (t[r] < 0) {
                continue;
            }
            double lse = logSumExp(logits.data(), r * v, v);
            for (int j = 0; j < v; j++) {
                out[r * v + j] = (Math.exp(logits.data()[r * v + j] - lse) - (j == t[r] ? 1 : 0)) * scale;
            }
        }
        return new RefTensor(logits.shape(), out);
    }

    /** out[outer, ids[i], inner] += updates[outer, i, inner], rows in id order. */
    static RefTensor scatterAdd(RefTensor updates, RefTensor ids, int axis, Shape outShape) {
        int n = outShape.dim(axis);
        long outer = 1;
        long inner = 1;
        for (int a = 0; a < outShape.rank(); a++) {
            if (a < axis) {
                outer *= outShape.dim(a);
            } else if (a > axis) {
                inner *= outShape.dim(a);
            }
        }
        int count = ids.data().length;
        long[] rows = new long[count];
        for (int i = 0; i < count; i++) {
            rows[i] = IndexOutOfRangeException.wrap((long) ids.data()[i], n, i, "scatter_add along axis " + axis + " of " + outShape);
        }
        double[] out = new double[Math.toIntExact(outShape.numel())];
        int u = 0;
        for (long b = 0; b < outer; b++) {
            for (int i = 0; i < count; i++) {
                long dst = (b * n + rows[i]) * inner;
                for (long e = 0; e < inner; e++) {
                    out[(int) (dst + e)] += updates.data()[u++];
                }
            }
        }
        return new RefTensor(outShape, out);
    }

    private static long target(RefTensor targets, int r, int v, long ignore) {
        long t = (long) targets.data()[r];
        if (t == ignore) {
            return -1;
        }
        if (t < 0 || t >= v) {
            throw new IndexOutOfRangeException("cross_entropy: target " + t + " at position " + r + " is outside [0, " + v
                    + ") and is not ignore_index " + ignore);
        }
        return t;
    }

    private static double logSumExp(double[] x, int off, int n) {
        double max = Double.NEGATIVE_INFINITY;
        for (int j = 0; j < n; j++) {
            max = Math.max(max, x[off + j]);
        }
        double sum = 0;
        for (int j = 0; j < n; j++) {
            sum += Math.exp(x[off + j] - max);
        }
        return max + Math.log(sum);
    }
}
