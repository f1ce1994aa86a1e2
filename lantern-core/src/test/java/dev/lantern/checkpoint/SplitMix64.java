package dev.lantern.checkpoint;

/**
 * SplitMix64 (Steele, Lea, Flood 2014) with its whole state in one visible {@code long}, so that a
 * checkpoint can store it and a resumed run continue the very same stream.
 */
final class SplitMix64 {
    private long state;

    SplitMix64(long state) {
        this.state = state;
    }

    long state() {
        return state;
    }

    void setState(long s) {
        state = s;
    }

    long nextLong() {
        long z = state += 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** Uniform in [0, 1) with 24 bits: exact in f32. */
    float nextFloat() {
        return (nextLong() >>> 40) * 0x1.0p-24f;
    }
}
