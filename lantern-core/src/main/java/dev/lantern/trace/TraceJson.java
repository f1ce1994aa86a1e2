package dev.lantern.trace;

import dev.lantern.util.JsonStrings;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The Chrome trace event format (what chrome://tracing and ui.perfetto.dev open): an object with
 * {@code "traceEvents"}, each event a complete event {@code {"name", "cat", "ph": "X", "ts",
 * "dur", "pid", "tid", "args"}} with times in microseconds (fractions kept: kernels last a few),
 * plus one {@code "M"} (metadata) event per track naming it.
 */
public final class TraceJson {
    private TraceJson() {}

    /** Writes {@code r} to {@code file} through a temporary file in the same folder and a move. */
    static void write(TraceRecorder r, Path file) {
        Path abs = file.toAbsolutePath();
        Path dir = abs.getParent();
        Path tmp = null;
        try {
            tmp = Files.createTempFile(dir, "." + abs.getFileName() + ".", ".tmp");
            try {
                // a temporary file is private to its owner; the trace is for whoever opens it
                Files.setPosixFilePermissions(tmp, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
            } catch (UnsupportedOperationException e) {
                // not a POSIX file system: its defaults stay
            }
            try (Writer w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
                write(r, w);
            }
            try {
                Files.move(tmp, abs, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, abs, StandardCopyOption.REPLACE_EXISTING);
            }
            tmp = null;
        } catch (IOException | SecurityException e) {
            throw new TraceException("cannot write the trace to " + file + ": " + e.getClass().getSimpleName()
                    + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")"), e);
        } finally {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // the write already failed; the leftover temporary file is the lesser problem
                }
            }
        }
    }

    /** The trace as JSON on {@code w}. */
    public static void write(TraceRecorder r, Writer w) throws IOException {
        long pid = ProcessHandle.current().pid();
        BufferedWriter out = w instanceof BufferedWriter b ? b : new BufferedWriter(w);
        out.write("{\"displayTimeUnit\": \"ms\", \"otherData\": {\"producer\": \"lantern\", \"dropped_events\": "
                + r.dropped() + "},\n\"traceEvents\": [\n");
        boolean first = true;
        for (Map.Entry<Long, String> t : r.trackNames().entrySet()) {
            first = sep(out, first);
            out.write("{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": " + pid + ", \"tid\": " + t.getKey()
                    + ", \"args\": {\"name\": " + quote(t.getValue()) + "}}");
        }
        List<TraceEvent> events = r.events();
        for (TraceEvent e : events) {
            first = sep(out, first);
            out.write("{\"name\": " + quote(e.name()) + ", \"cat\": " + quote(e.category()) + ", \"ph\": \"X\", \"ts\": "
                    + micros(e.startNanos()) + ", \"dur\": " + micros(e.durNanos()) + ", \"pid\": " + pid + ", \"tid\": " + e.tid());
            if (!e.args().isEmpty()) {
                out.write(", \"args\": {");
                boolean firstArg = true;
                for (Map.Entry<String, Object> a : e.args().entrySet()) {
                    out.write((firstArg ? "" : ", ") + quote(a.getKey()) + ": " + value(a.getValue()));
                    firstArg = false;
                }
                out.write('}');
            }
            out.write('}');
        }
        out.write("\n]}\n");
        out.flush();
    }

    private static boolean sep(Writer out, boolean first) throws IOException {
        if (!first) {
            out.write(",\n");
        }
        return false;
    }

    /** Nanoseconds as microseconds with three decimals (the format's unit; nanosecond resolution kept). */
    static String micros(long nanos) {
        return String.format(Locale.ROOT, "%.3f", nanos / 1000.0);
    }

    private static String value(Object v) {
        if (v instanceof Number n && !(v instanceof Double d && !Double.isFinite(d)) && !(v instanceof Float f && !Float.isFinite(f))) {
            return n instanceof Double || n instanceof Float ? String.format(Locale.ROOT, "%.6g", n.doubleValue()) : n.toString();
        }
        return quote(String.valueOf(v));
    }

    private static String quote(String s) {
        return JsonStrings.quote(s);
    }
}
