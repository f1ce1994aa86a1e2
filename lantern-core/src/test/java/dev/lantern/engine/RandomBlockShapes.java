package dev.lantern.engine;

import dev.lantern.frontend.nn.BlockConfig;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Seeded random transformer-block shapes over the space of issue 12: batch 1–4, seq 1–1100, heads
 * 1–16, head_dim in {32, 64, 80, 96, 128}, mlp 1–6000, decoder or encoder, f32 or bf16 AMP.
 *
 * <p>How the shapes are drawn, and why. Each dimension is first drawn uniformly from its whole
 * range, so any value can come up. The float64 reference interpreter (plain loops, O(s²) score
 * matrices) is what costs: a uniform draw averages ~70 GFLOP of reference work, hours on a 2-core
 * CI machine. So while a shape's {@link #cost} is over {@link #BUDGET}, one of its sizes (batch,
 * seq, heads or mlp, picked at random) is re-drawn uniformly below its current value; head_dim
 * keeps its uniform draw from the five choices. The ranges stay the full ranges: a big value
 * survives where the rest of the shape is small (seq 1064 with one head, mlp 5500 with 20 tokens),
 * and the distribution leans towards small shapes, which is where tails, single rows and tiny
 * tiles live. On top of the random draws, {@link #extremes} pins a
 * handful of shapes at each range's ends (seq 1 and 1100, mlp 1 and 6000, heads 1 and 16, batch 4,
 * every head_dim) under a larger budget, so every end of every range is run whatever the seed.
 */
record RandomBlockShapes(int batch, int seq, int heads, int headDim, int mlp, boolean decoder, boolean amp, long seed) {
    static final int[] HEAD_DIMS = {32, 64, 80, 96, 128};
    static final int MAX_BATCH = 4;
    static final int MAX_SEQ = 1100;
    static final int MAX_HEADS = 16;
    static final int MAX_MLP = 6000;

    /** Reference work of one random shape, in {@link #cost} units (≈ multiply-adds). */
    static final double BUDGET = 300e6;
    /** Budget of the pinned extreme shapes: a few of them may cost more. */
    static final double EXTREME_BUDGET = 1000e6;

    int hidden() {
        return heads * headDim;
    }

    BlockConfig config() {
        return new BlockConfig("rand-" + Long.toHexString(seed), batch, seq, hidden(), heads, mlp, decoder);
    }

    /**
     * Approximate reference work: the GEMM multiply-adds (the reference forms the full s×s score
     * matrix, causal or not), plus a few per weight (drawing, converting and loading it) and per
     * score element (exp, softmax passes).
     */
    double cost() {
        double t = (double) batch * seq;
        double h = hidden();
        double gemm = t * h * h * 4 + t * h * mlp * 2 + 2.0 * batch * heads * (double) seq * seq * headDim;
        double weights = 4 * h * h + 2 * h * mlp;
        double scores = (double) batch * heads * seq * seq;
        return gemm + 20 * weights + 20 * scores + 50 * t * (h + mlp);
    }

    String label() {
        return String.format(java.util.Locale.ROOT, "b=%d s=%d heads=%d hd=%d mlp=%d %s %s seed=%d", batch, seq, heads, headDim, mlp,
                decoder ? "decoder" : "encoder", amp ? "bf16-amp" : "f32", seed);
    }

    /** The pinned shapes followed by random ones under {@code budget}, {@code total} in all, from {@code masterSeed}. */
    static List<RandomBlockShapes> draw(long masterSeed, int total, double budget) {
        SplittableRandom r = new SplittableRandom(masterSeed);
        List<RandomBlockShapes> out = new ArrayList<>(extremes(r));
        while (out.size() < total) {
            out.add(random(r, budget));
        }
        return out;
    }

    static RandomBlockShapes random(SplittableRandom r, double budget) {
        int b = 1 + r.nextInt(MAX_BATCH);
        int s = 1 + r.nextInt(MAX_SEQ);
        int h = 1 + r.nextInt(MAX_HEADS);
        int m = 1 + r.nextInt(MAX_MLP);
        boolean dec = r.nextBoolean();
        boolean amp = r.nextBoolean();
        long seed = r.nextLong();
        RandomBlockShapes c = new RandomBlockShapes(b, s, h, HEAD_DIMS[r.nextInt(HEAD_DIMS.length)], m, dec, amp, seed);
        while (c.cost() > budget) {
            // re-draw one size, chosen at random among those above 1, uniformly below its value;
            // head_dim is a choice of five, not a size, and keeps its draw (the others can always shrink)
            int[] dims = {c.batch, c.seq, c.heads, c.mlp};
            int which;
            do {
                which = r.nextInt(dims.length);
            } while (dims[which] <= 1);
            dims[which] = 1 + r.nextInt(dims[which] - 1);
            c = new RandomBlockShapes(dims[0], dims[1], dims[2], c.headDim, dims[3], c.decoder, c.amp, c.seed);
        }
        return c;
    }

    /** Shapes at the ends of every range, each with a seed from {@code r} (sizes fixed, so that the ends are always run). */
    static List<RandomBlockShapes> extremes(SplittableRandom r) {
        List<RandomBlockShapes> e = new ArrayList<>();
        int[][] pinned = {
                // batch, seq, heads, head_dim, mlp, decoder, amp
                {1, 1100, 1, 32, 64, 1, 0},     // the longest sequence, causal
                {1, 1100, 1, 80, 7, 0, 1},      // the longest sequence, encoder, bf16, odd head_dim
                {2, 1099, 2, 32, 33, 1, 1},
                {4, 1, 16, 128, 6000, 1, 0},    // one token, the widest block and MLP
                {3, 1, 2, 128, 6000, 0, 1},
                {1, 1, 1, 32, 1, 1, 0},         // the smallest block of all
                {1, 1, 1, 32, 1, 0, 1},
                {3, 7, 1, 80, 6000, 1, 1},      // the widest MLP on a short sequence
                {2, 9, 3, 96, 5999, 0, 0},
                {4, 37, 16, 32, 1, 1, 1},       // mlp 1 (a rank-1 MLP), 16 heads
                {4, 129, 5, 96, 1, 0, 0},
                {4, 250, 1, 80, 500, 1, 0},     // batch 4, odd head_dim
                {4, 17, 16, 32, 3000, 0, 1},
                {1, 513, 3, 64, 1000, 1, 1},
                {2, 65, 7, 128, 257, 0, 0},
                {1, 3, 9, 80, 4097, 1, 0},
        };
        for (int[] p : pinned) {
            RandomBlockShapes c = new RandomBlockShapes(p[0], p[1], p[2], p[3], p[4], p[5] == 1, p[6] == 1, r.nextLong());
            if (c.cost() > EXTREME_BUDGET) {
                throw new IllegalStateException("pinned shape over the extreme budget: " + c.label() + " cost " + c.cost());
            }
            e.add(c);
        }
        return e;
    }
}
