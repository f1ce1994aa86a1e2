package dev.lantern.cli;


import java.io.PrintStream;
import java.util.List;

/** {@code lantern soak}: the runtime's allocator soak (see docs/soak.md). */
final class SoakCommandLine {
    private SoakCommandLine() {}

    static int run(List<String> argv, PrintStream out, PrintStream err) {
        return SoakCommand.run(argv.toArray(String[]::new), out, err);
    }
}
