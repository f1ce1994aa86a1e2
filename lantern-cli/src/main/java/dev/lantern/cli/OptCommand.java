package dev.lantern.cli;

import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.IrPrinter;
import dev.lantern.ir.Verifier;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/** {@code lantern opt FILE.ir [--passes a,b] [--dump-after-each]}: parse, verify, run passes, print. */
final class OptCommand {
    private OptCommand() {}

    static int run(List<String> argv, PrintStream out, PrintStream err, boolean verbose) {
        Args a = Args.parse("opt", argv, Set.of("dump-after-each"), Set.of("passes"));
        if (a.positional().size() != 1) {
            throw new UsageException("opt: expected one FILE.ir, found " + a.positional().size() + " arguments");
        }
        Graph g = Verifier.verify(IrParser.parse(Files2.read(Path.of(a.positional().getFirst()))));
        out.print(IrPrinter.print(g));
        return 0;
    }
}
