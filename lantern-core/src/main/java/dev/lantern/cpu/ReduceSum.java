package dev.lantern.cpu;

import java.util.Arrays;

/**
 * reduce_sum over any set of axes: one task per output element, each summing its input elements
 * in row-major order of the reduced axes, in double. Why double: a weight's gradient sums over
 * every token of a batch, and this kernel is memory-bound, so the wider sum costs nothing; why one
 * fixed order per element: the result is the same for any thread count (the determinism mode).
 */
public final class ReduceSum {
    private ReduceSum() {}

    /** out (the kept axes, or with the reduced ones as size 1) = Σ x over {@code reduced} axes. */
    public static void run(View x, boolean[] reduced, View out) {
        int rank = x.rank();
        int[] keptDims = new int[rank];
        long[] keptStrides = new long[rank];
        int[] redDims = new int[rank];
        long[] redStrides = new long[rank];
        int nk = 0;
        int nr = 0;
        long count = 1;
        for (int a = 0; a < rank; a++) {
            if (reduced[a]) {
                redDims[nr] = x.shape().dim(a);
                redStrides[nr++] = x.strides()[a];
                count *= x.shape().dim(a);
            } else {
                keptDims[nk] = x.shape().dim(a);
                keptStrides[nk++] = x.strides()[a];
            }
        }
        int[] kd = Arrays.copyOf(keptDims, nk);
        long[] ks = Arrays.copyOf(keptStrides, nk);
        int[] rd = Arrays.copyOf(redDims, nr);
        long[] rs = Arrays.copyOf(redStrides, nr);
        long total = count;
        // out is contiguous, its elements in the kept axes' row-major order whether or not keepdims
        Parallel.forRange(out.numel(), Math.max(1, 16384 / Math.max(1, total)), (s, e) -> {
            int[] idx = new int[rd.length];
            for (long o = s; o < e; o++) {
                long base = x.offset();
                long rem = o;
                for (int a = kd.length - 1; a >= 0; a--) {
                    base += (rem % kd[a]) * ks[a];
                    rem /= kd[a];
                }
                Arrays.fill(idx, 0);
                double acc = 0;
                for (long k = 0; k < total; k++) {
                    long off = base;
                    for (int a = 0; a < rd.length; a++) {
                        off += idx[a] * rs[a];
                    }
                    acc += Convert.get(x.segment(), x.dtype(), off);
                    for (int a = rd.length - 1; a >= 0 && ++idx[a] == rd[a]; a--) {
                        idx[a] = 0;
                    }
                }
                Convert.set(out.segment(), out.dtype(), out.offset() + o, (float) acc);
            }
        });
    }
}
