package dev.lantern.cuda.lower;

import dev.lantern.frontend.nn.BlockConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The random block shapes of issue 12, shared by the GPU tier ({@code RandomShapeGpuTest}) and
 * the offline lowering check ({@code RandomShapeLoweringTest}), so both see the same configs:
 * batch 1–4, seq 1–1100, heads 1–16, head_dim in {32, 64, 80, 96, 128}, mlp 1–6000, decoder or
 * encoder. Each size is an end of its range one time in eight (seq 1, mlp 1, one head: the
 * degenerate tiles are where kernels break), else uniform. Seeded: {@code -Dlantern.randomShapes.seed}
 * (default 12), count {@code -Dlantern.randomShapes} (default 60; fewer under compute-sanitizer).
 */
public final class RandomBlocks {
    public static final int[] HEAD_DIMS = {32, 64, 80, 96, 128};
    public static final int DEFAULT_COUNT = 60;
    public static final long DEFAULT_SEED = 12;

    private RandomBlocks() {}

    public static int count() {
        return Math.max(1, Integer.getInteger("lantern.randomShapes", DEFAULT_COUNT));
    }

    public static long seed() {
        return Long.getLong("lantern.randomShapes.seed", DEFAULT_SEED);
    }

    /** {@link #count()} configs from {@link #seed()}. */
    public static List<BlockConfig> configs() {
        return configs(seed(), count());
    }

    /** {@code n} configs drawn from {@code seed}; the i-th is named {@code r<i>} with its shape. */
    public static List<BlockConfig> configs(long seed, int n) {
        SplittableRandom r = new SplittableRandom(seed);
        List<BlockConfig> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int batch = size(r, 1, 4);
            int seq = size(r, 1, 1100);
            int heads = size(r, 1, 16);
            int headDim = HEAD_DIMS[r.nextInt(HEAD_DIMS.length)];
            int mlp = size(r, 1, 6000);
            boolean decoder = r.nextBoolean();
            String name = "r" + i + "-" + (decoder ? "dec" : "enc") + "-" + batch + "x" + seq + "x" + heads * headDim
                    + "h" + heads + "m" + mlp;
            out.add(new BlockConfig(name, batch, seq, heads * headDim, heads, mlp, decoder));
        }
        return out;
    }

    private static int size(SplittableRandom r, int lo, int hi) {
        if (r.nextInt(8) == 0) {
            return r.nextBoolean() ? lo : hi;
        }
        return r.nextInt(lo, hi + 1);
    }

    /**
     * A refusal's constraint, for counting: the exception's type and its message with numbers
     * and kernel names blanked, so the same constraint met at two shapes counts once.
     */
    public static String constraintOf(Throwable e) {
        String m = e.getMessage() == null ? "" : e.getMessage();
        int colon = m.lastIndexOf(": ");
        String tail = colon >= 0 ? m.substring(colon + 2) : m; // the lowering prefixes the kernel and node
        tail = tail.replaceAll("\\d+", "N");
        if (tail.length() > 120) {
            tail = tail.substring(0, 120) + "…";
        }
        return e.getClass().getSimpleName() + ": " + tail;
    }
}
