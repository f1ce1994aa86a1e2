package dev.lantern.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ProgressBarTest {
    @Test
    void progressBarDrawsOnlyWhenEnabled() {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        AtomicLong clock = new AtomicLong();
        ProgressBar bar = new ProgressBar("soak", 100, "ops", new PrintStream(buf, true, StandardCharsets.UTF_8),
                true, clock::get);
        clock.set(1_000_000_000L);
        bar.step(50);
        bar.close();
        String s = buf.toString(StandardCharsets.UTF_8);
        assertTrue(s.startsWith("\rsoak [##########..........]  50%  50/100 ops  50.0 ops/s  ETA 00:00:01"), s);
        assertTrue(s.endsWith(System.lineSeparator()), s);
        ByteArrayOutputStream quiet = new ByteArrayOutputStream();
        ProgressBar q = new ProgressBar("x", 10, "ops", new PrintStream(quiet), false, clock::get);
        q.step(5);
        q.close();
        assertEquals(0, quiet.size());
        assertEquals(5, q.done());
    }
}
