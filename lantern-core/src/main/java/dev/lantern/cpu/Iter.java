package dev.lantern.cpu;

import dev.lantern.ir.Shape;

/**
 * Walks several views of one shape together, in row-major order, as runs of up to {@link #CHUNK}
 * elements along the innermost (coalesced) axis. Adjacent axes merge when every operand's strides
 * allow it (stride[d] == stride[d+1]·dim[d+1]), so contiguous tensors become one long run and a
 * bias broadcast over (M, N) stays rows of N. Inner strides may be 1 (contiguous), 0 (broadcast)
 * or anything else (gather).
 */
public final class Iter {
    /** Elements per run: small enough that a few f32 chunks stay in L1. */
    public static final int CHUNK = 1024;

    private final int[] dims;
    private final long[][] strides; // [operand][axis]
    private final long[] bases;
    private final long numel;

    private Iter(int[] dims, long[][] strides, long[] bases, long numel) {
        this.dims = dims;
        this.strides = strides;
        this.bases = bases;
        this.numel = numel;
    }

    /** An iteration over {@code shape}; every view must already have that shape (broadcast first). */
    public static Iter over(Shape shape, View... views) {
        int ops = views.length;
        int rank = shape.rank();
        int[] d = new int[Math.max(1, rank)];
        long[][] s = new long[ops][Math.max(1, rank)];
        int r = 0;
        if (rank == 0) {
            d[0] = 1;
            r = 1;
        }
        for (int axis = 0; axis < rank; axis++) {
            int n = shape.dim(axis);
            if (n == 1 && rank > 1) {
                continue; // size-1 axes carry no information
            }
            boolean merge = r > 0;
            for (int o = 0; o < ops && merge; o++) {
                merge = s[o][r - 1] == views[o].strides()[axis] * n;
            }
            if (merge) {
                d[r - 1] *= n;
                for (int o = 0; o < ops; o++) {
                    s[o][r - 1] = views[o].strides()[axis];
                }
            } else {
                d[r] = n;
                for (int o = 0; o < ops; o++) {
                    s[o][r] = views[o].strides()[axis];
                }
                r++;
            }
        }
        if (r == 0) {
            d[0] = 1;
            r = 1;
        }
        int[] dims = java.util.Arrays.copyOf(d, r);
        long[][] strides = new long[ops][];
        long[] bases = new long[ops];
        for (int o = 0; o < ops; o++) {
            strides[o] = java.util.Arrays.copyOf(s[o], r);
            bases[o] = views[o].offset();
        }
        return new Iter(dims, strides, bases, shape.numel());
    }

    public long numel() {
        return numel;
    }

    /** Inner-axis stride of operand {@code o}. */
    public long innerStride(int o) {
        return strides[o][dims.length - 1];
    }

    /** One run: element offsets of each operand at its start, and its length. */
    @FunctionalInterface
    public interface RunBody {
        void run(long[] offsets, int n);
    }

    /** Calls {@code body} for each run covering linear elements [start, end). */
    public void forEachRun(long start, long end, RunBody body) {
        int rank = dims.length;
        int[] idx = new int[rank];
        long rem = start;
        for (int a = rank - 1; a >= 0; a--) {
            idx[a] = (int) (rem % dims[a]);
            rem /= dims[a];
        }
        long[] offs = new long[bases.length];
        long pos = start;
        while (pos < end) {
            int n = (int) Math.min(Math.min(dims[rank - 1] - idx[rank - 1], end - pos), CHUNK);
            for (int o = 0; o < offs.length; o++) {
                long off = bases[o];
                for (int a = 0; a < rank; a++) {
                    off += idx[a] * strides[o][a];
                }
                offs[o] = off;
            }
            body.run(offs, n);
            pos += n;
            idx[rank - 1] += n;
            for (int a = rank - 1; a > 0 && idx[a] >= dims[a]; a--) {
                idx[a] = 0;
                idx[a - 1]++;
            }
        }
    }

    /** The whole iteration, split across the pool in ranges of at least {@code grain} elements. */
    public void forEachRunParallel(long grain, RunBody body) {
        Parallel.forRange(numel, grain, (s, e) -> forEachRun(s, e, body));
    }

    /** Element offset of row {@code r} of {@code v} (all axes but the last, row-major). */
    public static long rowOffset(View v, long r) {
        long off = v.offset();
        long[] st = v.strides();
        int rank = v.rank();
        // rows whose leading axes nest evenly (every dense activation) are one strided axis: no
        // division. The general path costs two long divisions per axis, and the row-wise kernels
        // call this for every row of every operand (rms_norm of 256 rows: about a third of its time).
        boolean folded = rank >= 2;
        for (int a = rank - 3; a >= 0 && folded; a--) {
            folded = st[a] == st[a + 1] * v.shape().dim(a + 1);
        }
        if (folded) {
            return off + r * st[rank - 2];
        }
        for (int a = v.rank() - 2; a >= 0; a--) {
            int n = v.shape().dim(a);
            off += (r % n) * st[a];
            r /= n;
        }
        return off;
    }
}
