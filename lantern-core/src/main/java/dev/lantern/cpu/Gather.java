package dev.lantern.cpu;

import dev.lantern.ir.DType;
import dev.lantern.ir.IndexOutOfRangeException;

import java.lang.foreign.MemorySegment;

/**
 * gather (an embedding lookup): {@code out[outer, i, inner] = table[outer, ids[i], inner]}. Every id is
 * read and range-checked first, on the caller's thread, so a bad id is an {@link IndexOutOfRangeException}
 * before anything is written and never a read past the table. The rows are then copied in parallel,
 * as raw bytes (the result has the table's dtype): one bulk copy per row where the table's row is
 * contiguous, element by element through its strides otherwise.
 */
public final class Gather {
    private Gather() {}

    public static void run(View table, View ids, int axis, View out) {
        if (out.numel() == 0) {
            return; // nothing is read
        }
        int rank = table.rank();
        long n = table.shape().dim(axis);
        long[] rows = rows(ids, n, "gather along axis " + axis + " of " + table.dtype() + table.shape());
        long outer = 1;
        for (int a = 0; a < axis; a++) {
            outer *= table.shape().dim(a);
        }
        int[] innerDims = java.util.Arrays.copyOfRange(table.shape().dims(), axis + 1, rank);
        long[] innerStrides = java.util.Arrays.copyOfRange(table.strides(), axis + 1, rank);
        long inner = 1;
        for (int d : innerDims) {
            inner *= d;
        }
        long innerSize = inner;
        boolean dense = contiguous(innerDims, innerStrides);
        long bytes = table.dtype().bytes();
        MemorySegment src = table.segment();
        MemorySegment dst = out.segment();
        long count = rows.length;
        // out is contiguous of shape (outer, ids..., inner): row r = (b, i) starts at element r * inner
        Parallel.forRange(outer * count, Math.max(1, 4096 / Math.max(1, innerSize)), (s, e) -> {
            for (long r = s; r < e; r++) {
                long b = r / count;
                long start = table.offset() + outerOffset(table, axis, b) + rows[(int) (r % count)] * table.strides()[axis];
                long to = out.offset() + r * innerSize;
                if (dense) {
                    MemorySegment.copy(src, start * bytes, dst, to * bytes, innerSize * bytes);
                } else {
                    copyStrided(src, start, innerDims, innerStrides, dst, to, bytes);
                }
            }
        });
    }

    /** The ids as non-negative row numbers, each checked against an axis of {@code n}. */
    static long[] rows(View ids, long n, String what) {
        DType d = ids.dtype();
        if (d != DType.I32 && d != DType.I64) {
            throw new IllegalArgumentException("gather ids must be i32 or i64, found " + d);
        }
        long count = ids.numel();
        if (count > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("too many gather ids: " + count);
        }
        long[] rows = new long[(int) count];
        int[] dims = ids.shape().dims();
        long[] st = ids.strides();
        int[] idx = new int[dims.length];
        for (int i = 0; i < rows.length; i++) {
            long off = ids.offset();
            for (int a = 0; a < dims.length; a++) {
                off += idx[a] * st[a];
            }
            long id = d == DType.I64 ? ids.segment().getAtIndex(Convert.I64, off) : ids.segment().getAtIndex(Convert.I32, off);
            rows[i] = IndexOutOfRangeException.wrap(id, n, i, what);
            for (int a = dims.length - 1; a >= 0 && ++idx[a] == dims[a]; a--) {
                idx[a] = 0;
            }
        }
        return rows;
    }

    /** The element offset of outer index {@code b} (row-major over the axes before {@code axis}). */
    private static long outerOffset(View t, int axis, long b) {
        long off = 0;
        for (int a = axis - 1; a >= 0; a--) {
            int n = t.shape().dim(a);
            off += (b % n) * t.strides()[a];
            b /= n;
        }
        return off;
    }

    private static boolean contiguous(int[] dims, long[] strides) {
        long want = 1;
        for (int a = dims.length - 1; a >= 0; a--) {
            if (dims[a] != 1 && strides[a] != want) {
                return false;
            }
            want *= dims[a];
        }
        return true;
    }

    private static void copyStrided(MemorySegment src, long start, int[] dims, long[] strides, MemorySegment dst, long to, long bytes) {
        int[] idx = new int[dims.length];
        long total = 1;
        for (int d : dims) {
            total *= d;
        }
        for (long k = 0; k < total; k++) {
            long off = start;
            for (int a = 0; a < dims.length; a++) {
                off += idx[a] * strides[a];
            }
            MemorySegment.copy(src, off * bytes, dst, (to + k) * bytes, bytes);
            for (int a = dims.length - 1; a >= 0 && ++idx[a] == dims[a]; a--) {
                idx[a] = 0;
            }
        }
    }
}
