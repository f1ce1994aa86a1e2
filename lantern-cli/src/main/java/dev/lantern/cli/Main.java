package dev.lantern.cli;

import dev.lantern.ir.LanternException;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;

/**
 * The {@code lantern} command. Each subcommand is a small class; this file only dispatches and
 * turns errors into one line and an exit code (1 for bad input, 2 for a bad command line), with the
 * stack trace only under {@code --verbose}.
 */
public final class Main {
    static final String USAGE = """
            usage: lantern <command> [options]

              demo     compile and run a transformer block on the best device present, checked
                       against a float64 reference   [--config NAME] [--json] [--dump-ir FILE]
                       [--device auto|cpu|cuda] [--amp bf16|f16] [--seed N] [--runs N]
              test     run the whole test suite (./mvnw -B verify)
              opt      parse an .ir file, run passes, print the result
                       FILE.ir [--passes a,b] [--dump-after-each]
              doctor   the JDK, the CPU's vector width, the CUDA libraries found and the GPUs
              soak     allocator soak: --seconds N --device sim|cuda [--seed N] [--json]
              bench    benchmarks: macro --config NAME | micro   [--device cuda] [--json]

            Every command takes --verbose (stack traces on errors).""";

    private Main() {}

    public static void main(String[] args) {
        int code = run(args, System.out, System.err);
        System.out.flush();
        System.exit(code);
    }

    public static int run(String[] argv, PrintStream out, PrintStream err) {
        List<String> args = Arrays.asList(argv);
        boolean verbose = args.contains("--verbose");
        List<String> rest = args.stream().filter(a -> !a.equals("--verbose")).toList();
        if (rest.isEmpty() || rest.getFirst().equals("help") || rest.getFirst().equals("--help") || rest.getFirst().equals("-h")) {
            out.println(USAGE);
            return rest.isEmpty() ? 2 : 0;
        }
        String cmd = rest.getFirst();
        List<String> tail = rest.subList(1, rest.size());
        try {
            return switch (cmd) {
                case "demo" -> DemoCommand.run(tail, out, err);
                case "opt" -> OptCommand.run(tail, out, err, verbose);
                case "doctor" -> DoctorCommand.run(tail, out);
                case "soak" -> SoakCommandLine.run(tail, out, err);
                case "bench" -> BenchCommand.run(tail, out, err);
                case "test" -> {
                    err.println("lantern test: run it through the ./lantern script (it runs ./mvnw -B verify)");
                    yield 2;
                }
                default -> throw new UsageException(": unknown command '" + cmd + "' (try: lantern help)");
            };
        } catch (UsageException e) {
            err.println("lantern" + (e.getMessage().startsWith(":") ? "" : " ") + e.getMessage());
            return 2;
        } catch (LanternException e) {
            err.println("lantern " + cmd + ": " + e.getMessage());
            if (verbose) {
                e.printStackTrace(err);
            }
            return 1;
        } catch (RuntimeException | OutOfMemoryError e) {
            err.println("lantern " + cmd + ": internal error: " + e);
            if (verbose) {
                e.printStackTrace(err);
            } else {
                err.println("(run again with --verbose for the stack trace)");
            }
            return 3;
        }
    }
}
