package dev.lantern.cli;

import dev.lantern.cuda.ffi.CudaOutOfMemoryException;
import dev.lantern.cuda.ffi.CudaUnavailableException;
import dev.lantern.ir.LanternException;
import dev.lantern.runtime.alloc.DeviceOutOfMemoryException;

import java.io.IOException;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code lantern} command. Each subcommand is a small class; this file only dispatches and
 * turns errors into one line and an exit code ({@link ExitStatus}: 1 bad input, 2 bad command
 * line, 3 internal error), with the stack trace only under {@code --verbose}. A failed write to
 * standard output is an error too (exit 1), not a silent success.
 */
public final class Main {
    static final String USAGE = """
            usage: lantern <command> [options]

              demo     compile and run a transformer block on the best device present, checked
                       against a float64 reference   [--config NAME | --shape B,S,H,N,M[,encoder]]
                       [--json] [--dump-ir FILE]
                       [--device auto|cpu|cuda] [--amp bf16|f16] [--seed N] [--runs N]
              test     run the whole test suite (./mvnw -B verify)
              run      run an IR graph or an ONNX model on a device; print each output's shape,
                       dtype, checksum and the median time   FILE.ir|MODEL.onnx|OUT.lpk [--device auto|cpu|cuda:N]
                       [--weights W] [--input NAME=FILE.npy] [--amp bf16] [--mode eager|compiled|graph]
                       [--seed N] [--runs N] [--out DIR] [--deterministic] [--json]; ONNX: [--tokens 1,2,3 | --batch B
                       --seq S [--vocab V]] [--shape NAME=d0,d1,...]
              compile  print one stage of a graph's compilation (steps and cuda: for the H200, no GPU
                       needed)   FILE.ir|MODEL.onnx --emit ir|kernels|plan|cuda|steps [--device cpu|cuda]
                       [--amp bf16]; ONNX: [--batch B --seq S | --shape NAME=d0,d1,...];
                       --package OUT.lpk [--key-env NAME]: a signed package to run or verify
              opt      parse an .ir file, run passes, print the result
                       FILE.ir [--passes a,b] [--dump-after-each]
              doctor   the JDK, the CPU's vector width, the CUDA libraries found and the GPUs
              soak     allocator soak: --seconds N --device sim|cuda [--seed N] [--json]
              bench    benchmarks: macro --config NAME|--shape B,S,H,N,M[,encoder] | micro
                       [--device cuda] [--deterministic] [--pipeline] [--json]  | train --config NAME
                       [--mode graph|compiled|eager] [--amp bf16|f16] [--steps N]  (the training step)
              report   every results file of a folder as one static HTML page (charts over commits,
                       kernel tables, soak memory, regression alerts)   DIR [--out report.html]
              train    train a one-block language model on the generated next-token task (--device cpu|cuda)
                       --config NAME|--shape B,S,H,N,M [--steps N] [--batch B] [--seq S] [--lr X]
                       [--accumulate K] [--amp bf16|f16] [--seed N] [--threads N] [--deterministic]
                       [--checkpoint-dir D [--checkpoint-every N] [--resume] [--keep N]] [--json]
              determinism  run one forward in N separate JVMs and compare graph hash, kernel keys,
                       autotune choices and outputs   --runs N --config NAME|--shape ...|--model FILE
                       [--device cpu|cuda] [--deterministic] [--threads 1,2] [--json]
              sign     sign files: a checksum manifest and its Ed25519 signature   --dir DIR FILE...
                       [--key-env NAME]  (a throwaway key unless NAME holds a release key)
              verify   check a signed manifest and every file it lists; names a tampered file
                       DIR/MANIFEST.sha256 --public-key FILE.pub | OUT.lpk [--public-key FILE.pub]
              gate     one CI gate, printing GATE <name> PASS|FAIL <figure>: determinism | performance
                       [--baseline FILE] | memory [--seconds N] | security [--fixtures-log FILE] |
                       compare NEW.json OLD.json [--max-worse 0.10] [--ratios-only]   (docs/security.md)

            run, train, soak and bench take --metrics-port P [--metrics-host H]: Prometheus metrics at
            http://H:P/metrics while the command runs (H 127.0.0.1 by default, P 0 picks a free port;
            the address goes to standard error; docs/observability.md).
            run, train and bench macro|micro|cpu take --trace FILE.json: a Chrome/Perfetto trace of the
            compile's passes, NVRTC compiles, every kernel (CPU clock, or CUDA events) and host steps.
            Every command takes --verbose (stack traces on errors).
            Exit codes: 0 done, 1 bad input or a failed check, 2 bad command line or no such device,
            3 internal error (a bug in Lantern).""";

    /** One subcommand: its arguments (without its name and --verbose) to an exit code. */
    @FunctionalInterface
    interface Command {
        int run(List<String> args, PrintStream out, PrintStream err, boolean verbose);
    }

    static final Map<String, Command> COMMANDS = commands();

    private Main() {}

    private static Map<String, Command> commands() {
        Map<String, Command> m = new LinkedHashMap<>();
        m.put("demo", (a, out, err, v) -> DemoCommand.run(a, out, err));
        m.put("opt", OptCommand::run);
        m.put("run", (a, out, err, v) -> RunCommand.run(a, out, err));
        m.put("compile", (a, out, err, v) -> CompileCommand.run(a, out, err));
        m.put("doctor", (a, out, err, v) -> DoctorCommand.run(a, out));
        m.put("soak", (a, out, err, v) -> SoakCommandLine.run(a, out, err));
        m.put("bench", (a, out, err, v) -> BenchCommand.run(a, out, err));
        m.put("determinism", (a, out, err, v) -> DeterminismCommand.run(a, out, err));
        m.put("train", (a, out, err, v) -> TrainCommand.run(a, out, err));
        m.put("gate", (a, out, err, v) -> GateCommand.run(a, out, err));
        m.put("sign", (a, out, err, v) -> VerifyCommand.sign(a, out));
        m.put("verify", (a, out, err, v) -> VerifyCommand.verify(a, out, err));
        m.put("report", (a, out, err, v) -> ReportCommand.run(a, out, err));
        m.put("determinism-run", (a, out, err, v) -> DeterminismRun.run(a, out)); // hidden: one run of determinism, in its own JVM
        m.put("test", (a, out, err, v) -> {
            err.println("lantern test: run it through the ./lantern script (it runs ./mvnw -B verify)");
            return ExitStatus.USAGE;
        });
        return Map.copyOf(m);
    }

    public static void main(String[] args) {
        CheckedOutput out = CheckedOutput.stdout();
        System.setOut(out); // output written past the commands' own stream is checked as well
        int code = run(args, out, System.err);
        System.exit(code);
    }

    public static int run(String[] argv, PrintStream out, PrintStream err) {
        return run(argv, out, err, COMMANDS);
    }

    static int run(String[] argv, PrintStream out, PrintStream err, Map<String, Command> commands) {
        List<String> args = Arrays.asList(argv);
        boolean verbose = args.contains("--verbose");
        List<String> rest = args.stream().filter(a -> !a.equals("--verbose")).toList();
        String cmd = rest.isEmpty() ? "" : rest.getFirst();
        int code;
        List<String> tail = rest.isEmpty() ? List.of() : rest.subList(1, rest.size());
        String helpFor = cmd.equals("help") && !tail.isEmpty() ? tail.getFirst()
                : commands.containsKey(cmd) && CommandHelp.asked(tail) ? cmd : null;
        if (helpFor != null) {
            var entry = CommandHelp.of(USAGE, helpFor);
            (entry.isPresent() ? out : err).println(entry.orElse("lantern help: unknown command '" + helpFor
                    + "' (try: lantern help)"));
            code = entry.isPresent() ? ExitStatus.OK : ExitStatus.USAGE;
        } else if (rest.isEmpty() || cmd.equals("help") || cmd.equals("--help") || cmd.equals("-h")) {
            (rest.isEmpty() ? err : out).println(USAGE);
            code = rest.isEmpty() ? ExitStatus.USAGE : ExitStatus.OK;
        } else {
            code = dispatch(cmd, tail, out, err, verbose, commands);
        }
        return checkOutput(cmd, code, out, err);
    }

    private static int dispatch(String cmd, List<String> tail, PrintStream out, PrintStream err, boolean verbose,
            Map<String, Command> commands) {
        try {
            Command c = commands.get(cmd);
            if (c == null) {
                throw new UsageException(": unknown command '" + cmd + "' (try: lantern help)");
            }
            return c.run(tail, out, err, verbose);
        } catch (UsageException e) {
            err.println("lantern" + (e.getMessage().startsWith(":") ? "" : " ") + ExitStatus.oneLine(e.getMessage()));
            return ExitStatus.USAGE;
        } catch (CudaUnavailableException e) {
            // the command line asked for a GPU that is not there: like bench and soak without one
            err.println("lantern " + cmd + ": no usable CUDA device: " + ExitStatus.oneLine(e.getMessage()));
            trace(e, err, verbose);
            return ExitStatus.USAGE;
        } catch (LanternException | CudaOutOfMemoryException | DeviceOutOfMemoryException e) {
            // typed: bad input, or an input too large for the device
            err.println("lantern " + cmd + ": " + ExitStatus.oneLine(e.getMessage()));
            trace(e, err, verbose);
            return ExitStatus.BAD_INPUT;
        } catch (RuntimeException | Error e) {
            err.println(ExitStatus.internalError(cmd, e));
            trace(e, err, verbose);
            return ExitStatus.INTERNAL;
        }
    }

    /** Output that did not reach its reader is a failure, whatever the command returned. */
    private static int checkOutput(String cmd, int code, PrintStream out, PrintStream err) {
        if (!out.checkError()) { // flushes first
            return code;
        }
        IOException why = out instanceof CheckedOutput c ? c.failure() : null;
        err.println("lantern" + (cmd.isEmpty() ? "" : " " + cmd) + ": cannot write to standard output: "
                + (why == null ? "write failed" : ExitStatus.oneLine(String.valueOf(why.getMessage()))));
        return code == ExitStatus.OK ? ExitStatus.BAD_INPUT : code;
    }

    private static void trace(Throwable e, PrintStream err, boolean verbose) {
        if (verbose) {
            e.printStackTrace(err);
        }
    }
}
