package dev.lantern.cpu;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * Data movement: materialising views (permute, transpose, slice, reshape) and concat. A copy is
 * an elementwise identity over the destination's shape, so {@link Iter} coalesces what it can;
 * when the source's innermost stride is not 1 (a transpose), the copy goes through 32×32 tiles so
 * that both the reads and the writes stay within a few cache lines.
 */
public final class Copy {
    private Copy() {}

    static final int TILE = 32;

    /** dst = src (same shape; any strides; converts dtype if they differ). */
    public static void run(View src, View dst) {
        int r = src.rank();
        if (r >= 2 && src.strides()[r - 1] != 1 && dst.strides()[r - 1] == 1) {
            int inner = innerAxis(src);
            if (inner >= 0 && inner < r - 1) {
                transposeTiled(src, dst, inner);
                return;
            }
        }
        if (src.dtype() == dst.dtype()) {
            // same dtype: runs along the coalesced inner axis are raw byte copies when both are contiguous there
            Iter it = Iter.over(dst.shape(), dst, src);
            if (it.innerStride(0) == 1 && it.innerStride(1) == 1) {
                long b = src.dtype().bytes();
                it.forEachRunParallel(64 * Iter.CHUNK, (offs, n) ->
                        MemorySegment.copy(src.segment(), offs[1] * b, dst.segment(), offs[0] * b, n * b));
                return;
            }
        }
        Elementwise.copy(src, dst);
    }

    /** dst = src in logical row-major order under dst's shape. */
    public static void reshape(View src, View dst) {
        if (src.isContiguous()) {
            Elementwise.copy(src.reshape(dst.shape()), dst);
            return;
        }
        // a strided source: copy it dense first, under its own shape
        dev.lantern.tensor.Tensor tmp = dev.lantern.tensor.Tensor.allocate(src.dtype(), src.shape());
        View dense = View.of(tmp);
        run(src, dense);
        Elementwise.copy(dense.reshape(dst.shape()), dst);
    }

    /** dst = concat(parts, axis). */
    public static void concat(List<View> parts, int axis, View dst) {
        int at = 0;
        for (View p : parts) {
            int len = p.shape().dim(axis);
            run(p, dst.slice(axis, at, at + len));
            at += len;
        }
    }

    /** The axis along which src has stride 1 (size > 1), or −1. */
    private static int innerAxis(View v) {
        for (int a = v.rank() - 1; a >= 0; a--) {
            if (v.strides()[a] == 1 && v.shape().dim(a) > 1) {
                return a;
            }
        }
        return -1;
    }

    /**
     * Copies with tiles over (src's contiguous axis p, the last axis q): every other axis is an outer
     * loop. Reads run along p, writes along q, TILE elements each.
     */
    private static void transposeTiled(View src, View dst, int p) {
        int r = src.rank();
        int q = r - 1;
        int np = src.shape().dim(p);
        int nq = src.shape().dim(q);
        if (src.numel() == 0) {
            return; // zero-size: nothing to copy, and numel / (np·nq) would divide by zero
        }
        long outer = src.numel() / ((long) np * nq);
        int tp = (np + TILE - 1) / TILE;
        int tq = (nq + TILE - 1) / TILE;
        Parallel.forRange(outer * tp * tq, 16, (s, e) -> {
            float[] buf = Rows.buffers(1, TILE * TILE)[0];
            for (long t = s; t < e; t++) {
                int bq = (int) (t % tq);
                int bp = (int) (t / tq % tp);
                long o = t / tq / tp;
                long so = src.offset();
                long dof = dst.offset();
                long rem = o;
                for (int a = r - 1; a >= 0; a--) {
                    if (a == p || a == q) {
                        continue;
                    }
                    int n = src.shape().dim(a);
                    so += (rem % n) * src.strides()[a];
                    dof += (rem % n) * dst.strides()[a];
                    rem /= n;
                }
                int p0 = bp * TILE;
                int q0 = bq * TILE;
                int lp = Math.min(TILE, np - p0);
                int lq = Math.min(TILE, nq - q0);
                // read columns (contiguous in src along p) into buf[j * TILE + i] = src[p0+i, q0+j]
                for (int j = 0; j < lq; j++) {
                    Convert.load(src.segment(), src.dtype(), so + p0 * src.strides()[p] + (q0 + j) * src.strides()[q], src.strides()[p], buf, j * TILE, lp);
                }
                float[] row = Rows.buffers(2, TILE * TILE)[1];
                for (int i = 0; i < lp; i++) {
                    for (int j = 0; j < lq; j++) {
                        row[j] = buf[j * TILE + i];
                    }
                    Convert.store(row, 0, dst.segment(), dst.dtype(), dof + (p0 + i) * dst.strides()[p] + q0 * dst.strides()[q], dst.strides()[q], lq);
                }
            }
        });
    }
}
