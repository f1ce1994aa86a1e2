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
        Tensor tokens = Tensor.allocate(config.idType(), shape);
        Tensor targets = Tensor.allocate(config.idType(), shape);
        int[] row = new int[config.seq() + 1];
        for (int b = 0; b < config.batch(); b++) {
            fillRow(row);
            long base = (long) b * config.seq();
            for (int t = 0; t < config.seq(); t++) {
                put(tokens.segment(), base + t, row[t]);
                put(targets.segment(), base + t, row[t + 1]);
            }
        }
        return new TokenBatch(tokens, targets, position++);
    }

    private void put(MemorySegment s, long i, int v) {
        if (config.idType() == DType.I32) {
            s.setAtIndex(I32, i, v);
        } else {
            s.setAtIndex(I64, i, v);
        }
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
