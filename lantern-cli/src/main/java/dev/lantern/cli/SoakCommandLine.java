package dev.lantern.cli;

import java.io.PrintStream;
import java.util.List;

/** {@code lantern soak}: delegates to the runtime's soak. */
final class SoakCommandLine {
    private SoakCommandLine() {}

    static int run(List<String> argv, PrintStream out, PrintStream err) {
        throw new UsageException("soak: not available in this build");
    }
}
