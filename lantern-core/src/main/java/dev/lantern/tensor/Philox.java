package dev.lantern.tensor;

/**
 * Philox-4x32-10, a counter-based generator: element {@code i} of stream {@code key} is a pure
 * function of (key, i), so initialisation is the same on CPU and GPU and for any thread count.
 */
public final class Philox {
    private static final int M0 = 0xD2511F53;
    private static final int M1 = 0xCD9E8D57;
    private static final int W0 = 0x9E3779B9;
    private static final int W1 = 0xBB67AE85;

    private Philox() {}

    /** Four 32-bit random words for counter {@code ctr} under {@code key}. */
    public static int[] block(long key, long ctr) {
        int c0 = (int) ctr;
        int c1 = (int) (ctr >>> 32);
        int c2 = 0;
        int c3 = 0;
        int k0 = (int) key;
        int k1 = (int) (key >>> 32);
        for (int r = 0; r < 10; r++) {
            long p0 = (M0 & 0xFFFFFFFFL) * (c0 & 0xFFFFFFFFL);
            long p1 = (M1 & 0xFFFFFFFFL) * (c2 & 0xFFFFFFFFL);
            int n0 = (int) (p1 >>> 32) ^ c1 ^ k0;
            int n1 = (int) p1;
            int n2 = (int) (p0 >>> 32) ^ c3 ^ k1;
            int n3 = (int) p0;
            c0 = n0;
            c1 = n1;
            c2 = n2;
            c3 = n3;
            k0 += W0;
            k1 += W1;
        }
        return new int[] {c0, c1, c2, c3};
    }

    /** A uniform float in (0, 1) for element {@code i}. */
    public static float uniform(long key, long i) {
        int w = block(key, i >>> 2)[(int) (i & 3)];
        return ((w >>> 8) + 0.5f) * 0x1.0p-24f;
    }

    /** A standard normal for element {@code i} (Box-Muller over two words of one block). */
    public static float normal(long key, long i) {
        int[] b = block(key, i >>> 1);
        int j = (int) (i & 1) * 2;
        double u1 = ((b[j] >>> 8) + 0.5) * 0x1.0p-24;
        double u2 = ((b[j + 1] >>> 8) + 0.5) * 0x1.0p-24;
        return (float) (Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2));
    }

    /** A 64-bit key from a seed and a name, so that each parameter has its own stream. */
    public static long key(long seed, String name) {
        long h = seed * 0x9E3779B97F4A7C15L;
        for (int i = 0; i < name.length(); i++) {
            h = (h ^ name.charAt(i)) * 0x100000001B3L;
        }
        return h ^ (h >>> 29);
    }

    /** A tensor of normals with standard deviation {@code std}. */
    public static Tensor normal(Tensor t, long key, float std) {
        for (long i = 0; i < t.numel(); i++) {
            t.set(i, normal(key, i) * std);
        }
        return t;
    }

    /** A tensor of uniforms in [lo, hi). */
    public static Tensor uniform(Tensor t, long key, float lo, float hi) {
        for (long i = 0; i < t.numel(); i++) {
            t.set(i, lo + (hi - lo) * uniform(key, i));
        }
        return t;
    }
}
