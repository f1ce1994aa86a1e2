package dev.lantern.cpu;

import dev.lantern.ir.DType;
import dev.lantern.ir.IndexOutOfRangeException;

/**
 * cross_entropy and its gradient over logits (tokens, V) and integer targets (tokens). Per token,
 * −log softmax(x)[t] = logsumexp(x) − x[t] with the max subtracted first; the loss is the mean over
 * the tokens whose target is not {@code ignore}. Every target is read and checked before any row
 * (a bad one is an {@link IndexOutOfRangeException}); the per-token losses are summed in token
 * order, in double, so the result does not depend on the thread count.
 */
public final class CrossEntropy {
    private CrossEntropy() {}

    /** The scalar mean loss into {@code out}. */
    public static void loss(View logits, View targets, long ignore, View out) {
        int v = logits.shape().last();
        long[] t = targets(targets, v, ignore);
        double[] perToken = new double[t.length];
        Rows.forEachRow(t.length, v, r -> {
            if (t[(int) r] < 0) {
                return;
            }
            float[] row = Rows.buffers(1, v)[0];
            Convert.loadRow(logits, Iter.rowOffset(logits, r), row, v);
            perToken[(int) r] = logSumExp(row, v) - row[(int) t[(int) r]];
        });
        double sum = 0;
        long count = 0;
        for (int i = 0; i < t.length; i++) {
            if (t[i] >= 0) {
                sum += perToken[i];
                count++;
            }
        }
        Convert.set(out.segment(), out.dtype(), out.offset(), (float) (sum / count)); // all ignored: 0/0 = NaN, as PyTorch
    }

    /** dlogits = (softmax(x) − onehot(t)) · dloss / count; 0 on ignored tokens. */
    public static void grad(View logits, View targets, View dloss, long ignore, View out) {
        int v = logits.shape().last();
        long[] t = targets(targets, v, ignore);
        long count = 0;
        for (long x : t) {
            count += x >= 0 ? 1 : 0;
        }
        float scale = (float) (dloss.getFlat(0) / (double) count);
        Rows.forEachRow(t.length, v, r -> {
            float[] row = Rows.buffers(1, v)[0];
            long target = t[(int) r];
            if (target < 0) {
                java.util.Arrays.fill(row, 0, v, 0f);
            } else {
                Convert.loadRow(logits, Iter.rowOffset(logits, r), row, v);
                Softmax.softmaxRow(row, v, 1f);
                row[(int) target] -= 1f;
                Rows.affine(row, 0f, scale, null, null, v);
            }
            Convert.storeRow(row, out, Iter.rowOffset(out, r), v);
        });
    }

    private static float logSumExp(float[] row, int n) {
        float max = Rows.max(row, n);
        double sum = 0;
        for (int j = 0; j < n; j++) {
            sum += VMath.exp(row[j] - max);
        }
        return (float) (max + Math.log(sum));
    }

    /** The targets in row order, −1 for an ignored token; any other outside [0, v) is an error. */
    static long[] targets(View targets, int v, long ignore) {
        long n = targets.numel();
        if (n > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("too many cross_entropy targets: " + n);
        }
        long[] t = new long[(int) n];
        int[] dims = targets.shape().dims();
        long[] st = targets.strides();
        int[] idx = new int[dims.length];
        for (int i = 0; i < t.length; i++) {
            long off = targets.offset();
            for (int a = 0; a < dims.length; a++) {
                off += idx[a] * st[a];
            }
            long id = targets.dtype() == DType.I64 ? targets.segment().getAtIndex(Convert.I64, off)
                    : targets.segment().getAtIndex(Convert.I32, off);
            if (id == ignore) {
                t[i] = -1;
            } else if (id < 0 || id >= v) {
                throw new IndexOutOfRangeException("cross_entropy: target " + id + " at position " + i + " is outside [0, " + v
                        + ") and is not ignore_index " + ignore);
            } else {
                t[i] = id;
            }
            for (int a = dims.length - 1; a >= 0 && ++idx[a] == dims[a]; a--) {
                idx[a] = 0;
            }
        }
        return t;
    }
}
