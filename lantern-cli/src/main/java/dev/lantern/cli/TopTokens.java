package dev.lantern.cli;

import dev.lantern.tensor.Tensor;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The most likely next tokens of a language-model head: for an output whose last dim is the
 * vocabulary, {@code [..., seq, vocab]}, the ids of the {@value #K} largest values at the last position
 * of each row (a rank-2 output {@code [rows, vocab]} is one position per row), largest first, ties to
 * the lower id.
 */
final class TopTokens {
    static final int K = 5;
    /** Rows printed at most; JSON has all of them. */
    static final int PRINTED_ROWS = 4;

    private TopTokens() {}

    /** True when {@code t} looks like logits over a vocabulary of {@code vocab} tokens. */
    static boolean isHead(Tensor t, Long vocab) {
        int[] d = t.shape().dims();
        return vocab != null && d.length >= 2 && d[d.length - 1] == vocab && t.dtype().isFloating();
    }

    /** Per row, the top ids at the last position. */
    static List<long[]> of(Tensor t) {
        int[] d = t.shape().dims();
        int vocab = d[d.length - 1];
        int seq = d.length >= 3 ? d[d.length - 2] : 1;
        long rows = t.numel() / ((long) vocab * seq);
        List<long[]> out = new ArrayList<>();
        for (long r = 0; r < rows; r++) {
            long base = (r * seq + seq - 1) * vocab;
            Integer[] idx = new Integer[vocab];
            for (int i = 0; i < vocab; i++) {
                idx[i] = i;
            }
            float[] v = new float[vocab];
            for (int i = 0; i < vocab; i++) {
                v[i] = t.get(base + i);
            }
            Arrays.sort(idx, (a, b) -> v[a] != v[b] ? Float.compare(v[b], v[a]) : Integer.compare(a, b));
            long[] top = new long[Math.min(K, vocab)];
            for (int i = 0; i < top.length; i++) {
                top[i] = idx[i];
            }
            out.add(top);
        }
        return out;
    }

    /** {@code [0,-1]} for rank 3, {@code [0]} for rank 2. */
    static String where(Tensor t, int row) {
        return t.shape().dims().length >= 3 ? "[" + row + ",-1]" : "[" + row + "]";
    }
}
