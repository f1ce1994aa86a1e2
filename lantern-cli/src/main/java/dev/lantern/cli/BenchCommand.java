package dev.lantern.cli;

import java.io.PrintStream;
import java.util.List;

/** {@code lantern bench}. */
final class BenchCommand {
    private BenchCommand() {}

    static int run(List<String> argv, PrintStream out, PrintStream err) {
        throw new UsageException("bench: not available in this build");
    }
}
