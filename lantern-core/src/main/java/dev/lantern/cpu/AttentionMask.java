package dev.lantern.cpu;

/**
 * The additive mask of attention (rank 4, broadcast to the scores (b, h, s, t): BERT's key-padding
 * mask is (b, 1, 1, t)), added to a row of scaled scores. A broadcast axis reads element 0 whatever
 * its stride, so the view need not be expanded first.
 */
public final class AttentionMask {
    private AttentionMask() {}

    /** p[po + j] += mask[batch, head, row, col0 + j] for j < n (each index taken modulo a size-1 axis). */
    public static void addRow(View mask, int batch, int head, int row, int col0, int n, float[] p, int po) {
        long[] st = mask.strides();
        int[] dims = mask.shape().dims();
        long base = mask.offset() + (dims[0] == 1 ? 0 : batch * st[0]) + (dims[1] == 1 ? 0 : head * st[1])
                + (dims[2] == 1 ? 0 : row * st[2]);
        long cs = dims[3] == 1 ? 0 : st[3];
        for (int j = 0; j < n; j++) {
            p[po + j] += Convert.get(mask.segment(), mask.dtype(), base + (col0 + j) * cs);
        }
    }
}
