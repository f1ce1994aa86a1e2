package dev.lantern.cli;

import dev.lantern.trace.TraceRecorder;
import dev.lantern.trace.Tracing;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;

/**
 * {@code --trace FILE}: record the command's compile phases, kernels (CPU timings, or CUDA events
 * on a GPU) and host work as a Chrome/Perfetto trace ({@link TraceRecorder}) and write it to FILE
 * when the command ends, even when it failed (what ran until then is often what one wants to see).
 * A path whose folder is missing, or that names a folder, is refused before any work starts.
 */
final class TraceOption {
    static final String USAGE = "[--trace FILE.json]";

    private TraceOption() {}

    /** The trace file, or null when {@code value} is null; a path that cannot be a new file here is a usage error. */
    static Path parse(String command, String value) {
        if (value == null) {
            return null;
        }
        Path p;
        try {
            p = Path.of(value);
        } catch (InvalidPathException e) {
            throw new UsageException(command + ": --trace: not a path: '" + value + "'");
        }
        if (value.isBlank() || Files.isDirectory(p)) {
            throw new UsageException(command + ": --trace takes a file to write, found " + (value.isBlank() ? "an empty path" : "the folder " + p));
        }
        Path dir = p.toAbsolutePath().getParent();
        if (dir == null || !Files.isDirectory(dir)) {
            throw new UsageException(command + ": --trace " + p + ": the folder " + dir + " does not exist");
        }
        if (!Files.isWritable(dir)) {
            throw new UsageException(command + ": --trace " + p + ": the folder " + dir + " is not writable");
        }
        return p;
    }

    /** Installs a recorder for the command when {@code file} is not null; closing writes the file and removes it. */
    static Traced start(String command, Path file, PrintStream err) {
        if (file == null) {
            return new Traced(command, null, null, null, err);
        }
        TraceRecorder rec = new TraceRecorder();
        return new Traced(command, file, rec, Tracing.install(rec), err);
    }

    /** The command's trace while it runs. */
    static final class Traced implements AutoCloseable {
        private final String command;
        private final Path file;
        private final TraceRecorder recorder;
        private final Tracing.Installed installed;
        private final PrintStream err;

        private Traced(String command, Path file, TraceRecorder recorder, Tracing.Installed installed, PrintStream err) {
            this.command = command;
            this.file = file;
            this.recorder = recorder;
            this.installed = installed;
            this.err = err;
        }

        /** Writes the trace atomically; a failure is a {@link dev.lantern.trace.TraceException} (one line, exit 1). */
        @Override
        public void close() {
            if (recorder == null) {
                return;
            }
            installed.close();
            recorder.write(file);
            err.println("lantern " + command + ": trace written to " + file + " (" + recorder.events().size() + " events"
                    + (recorder.dropped() > 0 ? ", " + recorder.dropped() + " dropped past the cap" : "") + ")");
            err.flush();
        }
    }
}
