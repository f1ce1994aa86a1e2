package dev.lantern.cpu;

/**
 * scatter_add, the transpose of {@link Gather}: {@code out[outer, r, inner] = Σ_{i: ids[i] = r}
 * updates[outer, i, inner]}, zero for rows no id names. No atomics and no races: the ids are
 * grouped by row first (a stable counting sort), then each (outer, row) task sums its updates in
 * id order, so the result is the same for any thread count. Ids are checked as gather checks them
 * (a negative id counts from the end once).
 */
public final class ScatterAdd {
    private ScatterAdd() {}

    /** out (contiguous, {@code size} rows along {@code axis}) = the rows of updates summed at their ids. */
    public static void run(View updates, View ids, int axis, View out) {
        int rank = out.rank();
        int n = out.shape().dim(axis);
        long[] rows = Gather.rows(ids, n, "scatter_add along axis " + axis + " of " + out.dtype() + out.shape());
        // byRow[start[r] .. start[r+1]) = the positions i with ids[i] = r, ascending
        int[] start = new int[n + 1];
        for (long r : rows) {
            start[(int) r + 1]++;
        }
        for (int r = 0; r < n; r++) {
            start[r + 1] += start[r];
        }
        int[] byRow = new int[rows.length];
        int[] fill = java.util.Arrays.copyOf(start, n);
        for (int i = 0; i < rows.length; i++) {
            byRow[fill[(int) rows[i]]++] = i;
        }
        long outer = 1;
        for (int a = 0; a < axis; a++) {
            outer *= out.shape().dim(a);
        }
        long inner = 1;
        for (int a = axis + 1; a < rank; a++) {
            inner *= out.shape().dim(a);
        }
        long innerSize = inner;
        long count = rows.length;
        // updates viewed as (outer, count, inner) and out as (outer, n, inner): both logical row-major;
        // out is contiguous (the executors' contract), so a row no id names is one zero fill
        boolean dense = updates.isContiguous();
        int bytes = out.dtype().bytes();
        Parallel.forRange(outer * n, Math.max(1, 4096 / Math.max(1, innerSize)), (s, e) -> {
            double[] acc = new double[(int) innerSize];
            float[] buf = new float[(int) innerSize];
            for (long task = s; task < e; task++) {
                long b = task / n;
                int r = (int) (task % n);
                long to = out.offset() + (b * n + r) * innerSize;
                if (start[r] == start[r + 1]) {
                    out.segment().asSlice(to * bytes, innerSize * bytes).fill((byte) 0); // 0 bits are 0.0 in every float dtype
                    continue;
                }
                java.util.Arrays.fill(acc, 0);
                for (int k = start[r]; k < start[r + 1]; k++) {
                    long base = (b * count + byRow[k]) * innerSize;
                    if (dense) {
                        Convert.load(updates.segment(), updates.dtype(), updates.offset() + base, 1, buf, 0, (int) innerSize);
                    } else {
                        for (int j = 0; j < innerSize; j++) {
                            buf[j] = updates.getFlat(base + j);
                        }
                    }
                    for (int j = 0; j < innerSize; j++) {
                        acc[j] += buf[j];
                    }
                }
                for (int j = 0; j < innerSize; j++) {
                    buf[j] = (float) acc[j];
                }
                Convert.store(buf, 0, out.segment(), out.dtype(), to, 1, (int) innerSize);
            }
        });
    }
}
