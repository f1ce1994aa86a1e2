package dev.lantern.cli;

import java.io.Console;
import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * A one-line terminal progress bar redrawn in place with {@code \r}:
 *
 * <pre>
 * soak [##########..........]  50%  30/60 s  1.0 s/s  ETA 00:00:30
 * </pre>
 *
 * It draws only on a terminal ({@link #forTerminal}); built quiet, or when stdout is not a
 * terminal (CI, a pipe, a file), every call is a no-op. {@link #step} and {@link #update} may
 * be called from any thread; redraws are throttled to a few per second.
 */
public final class ProgressBar implements AutoCloseable {
    private static final int WIDTH = 20;
    private static final long REDRAW_NANOS = 200_000_000L;

    private final String label;
    private final String unit;
    private final long total;
    private final PrintStream out;
    private final boolean enabled;
    private final LongSupplier clock;
    private final long startNanos;
    private final AtomicLong done = new AtomicLong();
    private long lastDrawNanos = Long.MIN_VALUE;
    private boolean closed;
    private volatile String status = "";

    /**
     * @param total units of work, > 0 (an unknown total shows count and rate only: pass 0)
     * @param unit  shown after counts: "ops", "s"
     */
    public ProgressBar(String label, long total, String unit, PrintStream out, boolean enabled, LongSupplier clock) {
        this.label = label;
        this.total = Math.max(0, total);
        this.unit = unit;
        this.out = out;
        this.enabled = enabled;
        this.clock = clock;
        this.startNanos = clock.getAsLong();
    }

    /** Draws on {@code System.err} when the JVM has a terminal, otherwise a no-op. */
    public static ProgressBar forTerminal(String label, long total, String unit) {
        Console c = System.console();
        return new ProgressBar(label, total, unit, System.err, c != null && c.isTerminal(), System::nanoTime);
    }

    public static ProgressBar quiet() {
        return new ProgressBar("", 0, "", System.err, false, System::nanoTime);
    }

    public boolean enabled() {
        return enabled;
    }

    /** Adds {@code n} units done. */
    public void step(long n) {
        long now = done.addAndGet(n);
        if (enabled) {
            draw(now, false);
        }
    }

    /** Sets the units done to {@code value} (for progress measured rather than counted, such as elapsed time). */
    public void update(long value) {
        done.set(value);
        if (enabled) {
            draw(value, false);
        }
    }

    public long done() {
        return done.get();
    }

    /** Text shown after the rate (a training run's loss, tokens/s and loss scale); drawn with the next update. */
    public void status(String text) {
        status = text == null ? "" : text;
    }

    /** Draws the final state and ends the line. */
    @Override
    public void close() {
        if (enabled) {
            draw(done.get(), true);
        }
    }

    private synchronized void draw(long value, boolean last) {
        if (closed) {
            return;
        }
        long now = clock.getAsLong();
        if (!last && lastDrawNanos != Long.MIN_VALUE && now - lastDrawNanos < REDRAW_NANOS) {
            return;
        }
        lastDrawNanos = now;
        out.print(render(value, now - startNanos));
        if (last) {
            out.println();
            closed = true;
        }
        out.flush();
    }

    /** The line for {@code value} units done after {@code elapsedNanos}, starting with {@code \r}. */
    String render(long value, long elapsedNanos) {
        double seconds = elapsedNanos / 1e9;
        double rate = seconds > 0 ? value / seconds : 0;
        StringBuilder sb = new StringBuilder("\r").append(label).append(' ');
        if (total > 0) {
            double frac = Math.min(1.0, (double) value / total);
            int filled = (int) Math.round(frac * WIDTH);
            sb.append('[').append("#".repeat(filled)).append(".".repeat(WIDTH - filled)).append("] ");
            sb.append(String.format(Locale.ROOT, "%3d%%  %d/%d %s", (int) Math.floor(frac * 100), value, total, unit));
        } else {
            sb.append(value).append(' ').append(unit);
        }
        sb.append("  ").append(compact(rate)).append(' ').append(unit).append("/s");
        if (total > 0 && rate > 0 && value < total) {
            sb.append("  ETA ").append(clockTime((long) Math.ceil((total - value) / rate)));
        }
        if (!status.isEmpty()) {
            sb.append("  ").append(status);
        }
        return sb.toString();
    }

    private static String compact(double v) {
        if (v >= 1e6) {
            return String.format(Locale.ROOT, "%.1fM", v / 1e6);
        }
        if (v >= 1e3) {
            return String.format(Locale.ROOT, "%.1fk", v / 1e3);
        }
        return String.format(Locale.ROOT, "%.1f", v);
    }

    private static String clockTime(long s) {
        return String.format(Locale.ROOT, "%02d:%02d:%02d", s / 3600, (s / 60) % 60, s % 60);
    }
}
