package dev.lantern.train.data;

/**
 * SplitMix64 (Steele, Lea and Flood, 2014): a 64-bit generator whose whole state is one long, so
 * a checkpoint saves it as a number and a resumed run draws the same values. It is not
 * thread-safe; {@link #split()} gives an independent generator for another consumer.
 */
public final class SplitMix64 {
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    private long state;

    /** A generator whose state is {@code seed}; seed 0 draws 0xE220A8397B1DCDAF first. */
    public SplitMix64(long seed) {
        this.state = seed;
    }

    /** The state, to save; {@code new SplitMix64(g.state())} continues exactly as {@code g}. */
    public long state() {
        return state;
    }

    /** A uniform 64-bit value. */
    public long nextLong() {
        state += GOLDEN;
        return mix(state);
    }

    /** A uniform value in [0, bound), unbiased (Lemire's multiply-and-reject on 32 bits). */
    public int nextInt(int bound) {
        if (bound <= 0) {
            throw new IllegalArgumentException("bound must be positive, got " + bound);
        }
        long m = (nextLong() >>> 32) * bound;
        if ((m & 0xFFFFFFFFL) < bound) {
            long threshold = (0x1_0000_0000L - bound) % bound;
            while ((m & 0xFFFFFFFFL) < threshold) {
                m = (nextLong() >>> 32) * bound;
            }
        }
        return (int) (m >>> 32);
    }

    /** A uniform value in [lo, hi]. */
    public int nextInt(int lo, int hi) {
        return lo + nextInt(hi - lo + 1);
    }

    /** A uniform double in [0, 1) with 53 random bits. */
    public double nextDouble() {
        return (nextLong() >>> 11) * 0x1.0p-53;
    }

    /** A new generator seeded from this one's next value, for an independent consumer. */
    public SplitMix64 split() {
        return new SplitMix64(mix(nextLong() ^ 0x5851F42D4C957F2DL));
    }

    /** The SplitMix64 output function (Stafford's variant 13), a bijection on 64 bits. */
    public static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
