package dev.lantern.train.data;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Tensor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * A seeded next-token language for {@code lantern train}: each sequence is a run of segments of
 * two kinds, over content tokens {@code 2 .. vocab-1}:
 *
 * <pre>
 * counting (3 in 4)  s, s+d, s+2d, ..., SEP        start s and stride d in {1, 2} drawn, 4..16
 *                                                   terms, wrapping inside the content range
 * copying (1 in 4)   x1 .. xk, COPY, x1 .. xk, SEP k in 2..6 random tokens, then the same again
 * </pre>
 *
 * {@code SEP} is token 0 and {@code COPY} token 1. After a segment's first tokens, a counting run is
 * predictable from the two before (a bigram-and-stride rule a small MLP learns) and a copy's second
 * half from the first (what attention learns), so the loss falls well below the uniform
 * {@code ln(vocab)} within a few hundred steps; the random starts and copied tokens keep it above 0.
 * Batches come from one {@link SplitMix64} stream, row after row; {@link #state()} (position and
 * generator state) is all a checkpoint needs to resume the stream exactly.
 */
public final class TokenTask {
    /** The segment separator. */
    public static final int SEP = 0;
    /** The marker between a copy's two halves. */
    public static final int COPY = 1;

    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final TokenTaskConfig config;
    private final SplitMix64 rng;
    private long position;

    private TokenTask(TokenTaskConfig config, long rngState, long position) {
        this.config = config;
        this.rng = new SplitMix64(rngState);
        this.position = position;
    }

    /** The task at position 0, its generator seeded from {@code config.seed()}. */
    public static TokenTask start(TokenTaskConfig config) {
        return new TokenTask(config, SplitMix64.mix(config.seed()), 0);
    }

    /** The task where {@code state} left it. */
    public static TokenTask resume(TokenTaskConfig config, TokenTaskState state) {
        if (state.position() < 0) {
            throw new IllegalArgumentException("data position must be non-negative, got " + state.position());
        }
        return new TokenTask(config, state.rngState(), state.position());
    }

    /** The task's shape. */
    public TokenTaskConfig config() {
        return config;
    }

    /** Batches drawn so far and the generator's state, to save. */
    public TokenTaskState state() {
        return new TokenTaskState(position, rng.state());
    }

    /** Tokens per batch ({@code batch * seq}), for tokens/s. */
    public long tokensPerBatch() {
        return (long) config.batch() * config.seq();
    }

    /** The next batch: (batch, seq) tokens and the (batch, seq) targets that follow them. */
    public TokenBatch next() {
        Shape shape = Shape.of(config.batch(), config.seq());
        int seq = config.seq();
        int n = Math.multiplyExact(config.batch(), seq);
        // rows built in arrays and written with one bulk copy each: an element-wise segment write per
        // token cost a step of the 16 x 1024 block about 1-3 ms before the JIT compiled it
        int[] tokens = new int[n];
        int[] targets = new int[n];
        int[] row = new int[seq + 1];
        for (int b = 0; b < config.batch(); b++) {
            fillRow(row);
            System.arraycopy(row, 0, tokens, b * seq, seq);
            System.arraycopy(row, 1, targets, b * seq, seq);
        }
        return new TokenBatch(ids(tokens, shape), ids(targets, shape), position++);
    }

    private Tensor ids(int[] values, Shape shape) {
        Tensor t = Tensor.allocate(config.idType(), shape);
        if (config.idType() == DType.I32) {
            MemorySegment.copy(values, 0, t.segment(), I32, 0, values.length);
        } else {
            long[] wide = new long[values.length];
            for (int i = 0; i < wide.length; i++) {
                wide[i] = values[i];
            }
            MemorySegment.copy(wide, 0, t.segment(), I64, 0, wide.length);
        }
        return t;
    }

    private void fillRow(int[] row) {
        int content = config.vocab() - 2;
        int n = 0;
        while (n < row.length) {
            if (rng.nextInt(4) != 0) {
                int s = rng.nextInt(content);
                int d = rng.nextInt(1, 2);
                int len = rng.nextInt(4, 16);
                for (int j = 0; j < len && n < row.length; j++) {
                    row[n++] = 2 + (int) ((s + (long) j * d) % content);
                }
            } else {
                int k = rng.nextInt(2, 6);
                int start = n;
                for (int j = 0; j < k && n < row.length; j++) {
                    row[n++] = 2 + rng.nextInt(content);
                }
                if (n < row.length) {
                    row[n++] = COPY;
                }
                for (int j = 0; j < k && n < row.length; j++) {
                    row[n++] = row[start + j];
                }
            }
            if (n < row.length) {
                row[n++] = SEP;
            }
        }
    }
}
