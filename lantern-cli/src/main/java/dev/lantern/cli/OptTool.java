package dev.lantern.cli;

import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.Pipeline;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.IrPrinter;
import dev.lantern.ir.LanternException;
import dev.lantern.ir.Verifier;
import dev.lantern.passes.Pass;
import dev.lantern.passes.Passes;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code lantern opt FILE.ir [--passes a,b] [--dump-after-each] [--verbose]}: parse, verify, run
 * the named passes in order (verifying after each), print the result. With no passes it prints the
 * file back, byte for byte when the file is in canonical form. {@code --passes standard} runs the
 * whole pipeline; {@code --passes list} lists the passes. A pass that shows more than IR (partition:
 * kernels; plan-memory: the arena) prints it after the graph as {@code #} comment lines, so the
 * output is itself a valid .ir file. Errors: one line {@code lantern opt: <message>}, exit 1 for bad
 * input, 2 for a bad command line (an unknown pass included), 3 for an internal error; the stack
 * trace only with {@code --verbose} (see {@link ExitStatus}).
 */
public final class OptTool {
    private OptTool() {}

    static final String USAGE = "usage: lantern opt FILE.ir [--passes a,b,...|standard|list] [--amp bf16|f16] [--dump-after-each] [--verbose]";

    /** Returns the exit status: 0 done, 1 bad input, 2 bad usage, 3 internal error. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        String file = null;
        List<String> names = new ArrayList<>();
        boolean dumpEach = false;
        boolean verbose = false;
        CompileOptions.Amp amp = CompileOptions.Amp.NONE;
        try {
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--passes" -> {
                        if (++i >= args.length) {
                            throw new LanternException("--passes needs a comma-separated list of passes");
                        }
                        for (String s : args[i].split(",")) {
                            if (!s.isBlank()) {
                                names.add(s.trim());
                            }
                        }
                    }
                    case "--amp" -> {
                        if (++i >= args.length) {
                            throw new LanternException("--amp needs none, bf16 or f16");
                        }
                        amp = CompileOptions.Amp.parse(args[i]);
                    }
                    case "--dump-after-each" -> dumpEach = true;
                    case "--verbose", "-v" -> verbose = true;
                    case "-h", "--help" -> {
                        out.println(USAGE);
                        return 0;
                    }
                    default -> {
                        if (args[i].startsWith("-") || file != null) {
                            err.println("lantern opt: unexpected argument '" + args[i] + "'; " + USAGE);
                            return ExitStatus.USAGE;
                        }
                        file = args[i];
                    }
                }
            }
        } catch (LanternException e) {
            err.println("lantern opt: " + e.getMessage());
            return ExitStatus.USAGE;
        }
        if (names.equals(List.of("list"))) {
            Passes.all().forEach((n, s) -> out.println(String.format("%-18s %s", n, s)));
            return 0;
        }
        if (file == null) {
            err.println(USAGE);
            return ExitStatus.USAGE;
        }
        if (amp != CompileOptions.Amp.NONE && !names.equals(List.of("standard"))) {
            // it would be silently ignored: only the standard pipeline takes the option
            err.println("lantern opt: --amp applies to --passes standard only (name autocast or autocast-f16 in a list)");
            return ExitStatus.USAGE;
        }
        List<Pass> passes;
        try {
            passes = resolve(names, amp); // before the file is read: an unknown pass is a bad command line
        } catch (LanternException e) {
            err.println("lantern opt: " + e.getMessage());
            return ExitStatus.USAGE;
        }
        try {
            String text = TextFiles.readUtf8(Path.of(file));
            Graph g = Verifier.verify(IrParser.parse(text), "verify");
            StringBuilder extra = new StringBuilder();
            for (Pass p : passes) {
                g = p.run(g);
                Verifier.verify(g, "after " + p.name());
                String dump = p.dump(g);
                if (dumpEach) {
                    out.print(Pipeline.dumpHeader(p));
                    out.print(IrPrinter.print(g));
                    out.print(comment(dump));
                }
                extra.setLength(0);
                extra.append(dump);
            }
            if (!dumpEach) {
                out.print(IrPrinter.print(g));
                out.print(comment(extra.toString()));
            }
            return 0;
        } catch (LanternException e) {
            err.println("lantern opt: " + ExitStatus.oneLine(e.getMessage()));
            if (verbose) {
                e.printStackTrace(err);
            }
            return ExitStatus.BAD_INPUT;
        } catch (RuntimeException | StackOverflowError e) {
            // not a typed error: a bug in Lantern, whatever the input was
            err.println(ExitStatus.internalError("opt", e));
            if (verbose) {
                e.printStackTrace(err);
            }
            return ExitStatus.INTERNAL;
        }
    }

    private static List<Pass> resolve(List<String> names, CompileOptions.Amp amp) {
        if (names.equals(List.of("standard"))) {
            return Pipeline.standard(CompileOptions.defaults().withAmp(amp)).passes();
        }
        List<Pass> ps = new ArrayList<>();
        for (String n : names) {
            ps.add(Passes.byName(n));
        }
        return ps;
    }

    /** Dump text as '#' comment lines, so the printed result still parses. */
    static String comment(String dump) {
        if (dump.isEmpty()) {
            return "";
        }
        StringBuilder b = new StringBuilder();
        for (String line : dump.split("\n", -1)) {
            if (!line.isEmpty()) {
                b.append(line.startsWith("#") ? line : "# " + line).append('\n');
            }
        }
        return b.toString();
    }
}
