package dev.lantern.cli;

import java.io.PrintStream;
import java.util.List;

/** {@code lantern demo} (being wired to the CPU backend). */
final class DemoCommand {
    private DemoCommand() {}

    static int run(List<String> argv, PrintStream out, PrintStream err) {
        throw new UsageException("demo: not available in this build");
    }
}
