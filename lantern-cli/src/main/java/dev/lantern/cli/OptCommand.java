package dev.lantern.cli;


import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/** {@code lantern opt FILE.ir [--passes a,b] [--dump-after-each]}: the compiler's OptTool (docs/compiler.md). */
final class OptCommand {
    private OptCommand() {}

    static int run(List<String> argv, PrintStream out, PrintStream err, boolean verbose) {
        List<String> args = new ArrayList<>(argv);
        if (verbose) {
            args.add("--verbose");
        }
        return OptTool.run(args.toArray(String[]::new), out, err);
    }
}
