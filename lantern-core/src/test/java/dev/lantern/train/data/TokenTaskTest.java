package dev.lantern.train.data;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The generator's reference values, and the task's determinism, resumption and language. */
class TokenTaskTest {
    @Test
    void splitMixMatchesTheReferenceSequence() {
        // the first outputs of SplitMix64 seeded with 0 (Vigna's splitmix64.c)
        SplitMix64 g = new SplitMix64(0);
        assertEquals(0xE220A8397B1DCDAFL, g.nextLong());
        assertEquals(0x6E789E6AA1B965F4L, g.nextLong());
        assertEquals(0x06C45D188009454FL, g.nextLong());
    }

    @Test
    void splitMixStateResumesAndBoundsAreUniform() {
        SplitMix64 g = new SplitMix64(123);
        for (int i = 0; i < 10; i++) {
            g.nextLong();
        }
        SplitMix64 h = new SplitMix64(g.state());
        for (int i = 0; i < 100; i++) {
            assertEquals(g.nextLong(), h.nextLong());
        }
        int[] counts = new int[7];
        for (int i = 0; i < 70_000; i++) {
            counts[g.nextInt(7)]++;
        }
        for (int c : counts) {
            // 10,000 expected; 5 standard deviations is about 470
            assertTrue(Math.abs(c - 10_000) < 500, "bucket count " + c);
        }
        for (int i = 0; i < 1000; i++) {
            int v = g.nextInt(-3, 3);
            assertTrue(v >= -3 && v <= 3);
            double d = g.nextDouble();
            assertTrue(d >= 0 && d < 1);
        }
        assertNotEquals(g.split().nextLong(), g.split().nextLong());
    }

    static long[] ids(TokenBatch b, boolean targets) {
        double[] d = (targets ? b.targets() : b.tokens()).toDoubles();
        long[] r = new long[d.length];
        for (int i = 0; i < d.length; i++) {
            r[i] = (long) d[i];
        }
        return r;
    }

    @Test
    void sameSeedSameBatchesAndTargetsAreTheNextTokens() {
        TokenTaskConfig c = new TokenTaskConfig(32, 4, 64, 2026, DType.I32);
        TokenTask a = TokenTask.start(c);
        TokenTask b = TokenTask.start(c);
        for (int i = 0; i < 5; i++) {
            TokenBatch x = a.next();
            TokenBatch y = b.next();
            assertEquals(i, x.position());
            assertEquals(Shape.of(4, 64), x.tokens().shape());
            assertEquals(DType.I32, x.tokens().dtype());
            assertTrue(java.util.Arrays.equals(ids(x, false), ids(y, false)));
            long[] tok = ids(x, false);
            long[] tgt = ids(x, true);
            for (int r = 0; r < 4; r++) {
                for (int t = 0; t + 1 < 64; t++) {
                    assertEquals(tok[r * 64 + t + 1], tgt[r * 64 + t], "targets are the tokens shifted by one");
                }
            }
            for (long v : tok) {
                assertTrue(v >= 0 && v < 32);
            }
        }
        assertNotEquals(List.of(ids(TokenTask.start(c).next(), false)[0], ids(TokenTask.start(c).next(), false)[1]),
                List.of(ids(TokenTask.start(new TokenTaskConfig(32, 4, 64, 2027, DType.I32)).next(), false)[0],
                        ids(TokenTask.start(new TokenTaskConfig(32, 4, 64, 2027, DType.I32)).next(), false)[1]));
    }

    @Test
    void aResumedStreamContinuesExactly() {
        TokenTaskConfig c = TokenTaskConfig.of(50, 3, 33, 9);
        TokenTask straight = TokenTask.start(c);
        TokenTask first = TokenTask.start(c);
        for (int i = 0; i < 7; i++) {
            straight.next();
            first.next();
        }
        TokenTaskState saved = first.state();
        assertEquals(7, saved.position());
        TokenTask resumed = TokenTask.resume(c, saved);
        for (int i = 0; i < 5; i++) {
            TokenBatch x = straight.next();
            TokenBatch y = resumed.next();
            assertEquals(x.position(), y.position());
            assertEquals(DType.I64, y.tokens().dtype());
            assertTrue(java.util.Arrays.equals(ids(x, false), ids(y, false)));
            assertTrue(java.util.Arrays.equals(ids(x, true), ids(y, true)));
        }
        assertEquals(straight.state(), resumed.state());
        assertThrows(IllegalArgumentException.class, () -> TokenTask.resume(c, new TokenTaskState(-1, 0)));
    }

    @Test
    void theLanguageIsMostlyPredictable() {
        // counting runs continue their stride, and after COPY the tokens repeat the segment's first half
        TokenTask task = TokenTask.start(TokenTaskConfig.of(40, 8, 256, 5));
        int predictable = 0;
        int total = 0;
        List<Long> copied = new ArrayList<>();
        for (int b = 0; b < 4; b++) {
            long[] tok = ids(task.next(), false);
            for (int r = 0; r < 8; r++) {
                for (int t = 3; t < 256; t++) {
                    long x = tok[r * 256 + t];
                    long p1 = tok[r * 256 + t - 1];
                    long p2 = tok[r * 256 + t - 2];
                    total++;
                    if (x >= 2 && p1 >= 2 && p2 >= 2 && Math.floorMod(x - p1, 38) == Math.floorMod(p1 - p2, 38)) {
                        predictable++;
                    }
                }
                // every COPY is followed by the tokens since the previous separator
                for (int t = 0; t < 256; t++) {
                    if (tok[r * 256 + t] == TokenTask.COPY) {
                        int s = t - 1;
                        while (s >= 0 && tok[r * 256 + s] >= 2) {
                            s--;
                        }
                        int k = t - s - 1;
                        for (int j = 0; j < k && t + 1 + j < 256; j++) {
                            assertEquals(tok[r * 256 + s + 1 + j], tok[r * 256 + t + 1 + j]);
                            copied.add(tok[r * 256 + t + 1 + j]);
                        }
                    }
                }
            }
        }
        assertTrue(predictable > 0.4 * total, predictable + " of " + total + " tokens continue a counting run");
        assertTrue(copied.size() > total / 20, copied.size() + " copied tokens");
    }
}
