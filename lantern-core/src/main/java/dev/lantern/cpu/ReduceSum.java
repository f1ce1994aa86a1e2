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

    private static final int CHUNK = 1024;

    /** out (the kept axes, or with the reduced ones as size 1) = Σ x over {@code reduced} axes. */
    public static void run(View x, boolean[] reduced, View out) {
        int rank = x.rank();
        int lead = 0;
        while (lead < rank && reduced[lead]) {
            lead++;
        }
        int tail = rank;
        while (tail > 0 && reduced[tail - 1]) {
            tail--;
        }
        // The two shapes of a gradient's reductions, on contiguous data, in the same order as below
        // (so the same bits): a weight's or bias's sum over the leading (row) axes, and a sum over
        // the trailing axes (the loss, a whole tensor)
        if (x.isContiguous() && out.isContiguous() && x.numel() > 0) {
            if (tail < rank && noneReducedBefore(reduced, tail)) {
                runs(x, prefix(x, tail), out);
                return;
            }
            if (lead > 0 && noneReducedFrom(reduced, lead)) {
                columns(x, prefix(x, lead), out);
                return;
            }
        }
        general(x, reduced, out);
    }

    private static boolean noneReducedFrom(boolean[] reduced, int from) {
        for (int a = from; a < reduced.length; a++) {
            if (reduced[a]) {
                return false;
            }
        }
        return true;
    }

    private static boolean noneReducedBefore(boolean[] reduced, int to) {
        for (int a = 0; a < to; a++) {
            if (reduced[a]) {
                return false;
            }
        }
        return true;
    }

    private static long prefix(View x, int axes) {
        long n = 1;
        for (int a = 0; a < axes; a++) {
            n *= x.shape().dim(a);
        }
        return n;
    }

    /** out[j] = Σ_r x[r, j] over {@code rows} rows of x.numel()/rows columns: column chunks in parallel, rows in order. */
    private static void columns(View x, long rows, View out) {
        long cols = x.numel() / rows;
        Parallel.forRange((cols + CHUNK - 1) / CHUNK, 1, (s, e) -> {
            float[] buf = new float[CHUNK];
            double[] acc = new double[CHUNK];
            for (long c = s; c < e; c++) {
                int len = (int) Math.min(CHUNK, cols - c * CHUNK);
                java.util.Arrays.fill(acc, 0);
                for (long r = 0; r < rows; r++) {
                    Convert.load(x.segment(), x.dtype(), x.offset() + r * cols + c * CHUNK, 1, buf, 0, len);
                    for (int j = 0; j < len; j++) {
                        acc[j] += buf[j];
                    }
                }
                for (int j = 0; j < len; j++) {
                    buf[j] = (float) acc[j];
                }
                Convert.store(buf, 0, out.segment(), out.dtype(), out.offset() + c * CHUNK, 1, len);
            }
        });
    }

    /** out[o] = Σ_k x[o, k] over contiguous runs: one task per output, each run read in chunks in order. */
    private static void runs(View x, long outputs, View out) {
        long len = x.numel() / outputs;
        Parallel.forRange(outputs, Math.max(1, 16384 / Math.max(1, len)), (s, e) -> {
            float[] buf = new float[CHUNK];
            for (long o = s; o < e; o++) {
                double acc = 0;
                for (long k = 0; k < len; k += CHUNK) {
                    int n = (int) Math.min(CHUNK, len - k);
                    Convert.load(x.segment(), x.dtype(), x.offset() + o * len + k, 1, buf, 0, n);
                    for (int j = 0; j < n; j++) {
                        acc += buf[j];
                    }
                }
                Convert.set(out.segment(), out.dtype(), out.offset() + o, (float) acc);
            }
        });
    }

    /** Any axes, any strides: a multi-index walk per output element. */
    private static void general(View x, boolean[] reduced, View out) {
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
