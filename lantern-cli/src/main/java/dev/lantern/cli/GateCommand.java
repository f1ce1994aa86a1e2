package dev.lantern.cli;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * {@code lantern gate NAME}: one gate of the Phase 1 plan, as {@code .ci/gates} runs it after the test
 * suite. Each prints one line {@code GATE <name> PASS|FAIL <figure>} (after any record it keeps, such
 * as the soak's JSON) and exits 0 when it passes, 1 when it fails, 2 for a bad command line.
 * {@code gate compare NEW OLD} is the performance gate's regression check on its own, for any two
 * results files (docs/security.md).
 */
final class GateCommand {
    static final String COMPARE_USAGE = "gate compare NEW.json OLD.json [--max-worse F] [--ratios-only] [--accepted FILE.tsv]";
    static final String USAGE = "gate determinism|performance|memory|security|signing|compare ... (" + DeterminismGate.USAGE + "; "
            + PerformanceGate.USAGE + "; " + MemoryGate.USAGE + "; " + SecurityGate.USAGE + "; " + SigningGate.USAGE + "; " + COMPARE_USAGE + ")";

    private GateCommand() {}


    static int run(List<String> argv, PrintStream out, PrintStream err) {
        if (argv.isEmpty()) {
            throw new UsageException("gate: name a gate: determinism, performance, memory, security, signing or compare");
        }
        List<String> rest = argv.subList(1, argv.size());
        return switch (argv.getFirst()) {
            case "determinism" -> DeterminismGate.run(rest, out, err);
            case "performance" -> PerformanceGate.run(rest, out, err);
            case "memory" -> MemoryGate.run(rest, out, err);
            case "security" -> SecurityGate.run(rest, out, err);
            case "signing" -> SigningGate.run(rest, out, err);
            case "compare" -> compare(rest, out);
            default -> throw new UsageException("gate: unknown gate '" + argv.getFirst()
                    + "' (determinism, performance, memory, security, signing or compare)");
        };
    }

    /** Every compared figure on a line of its own, the worst first, then the verdict as a gate line named {@code regression}. */
    static int compare(List<String> argv, PrintStream out) {
        Args a = Args.parse("gate compare", argv, Set.of("ratios-only"), Set.of("max-worse", "accepted"));
        if (a.positional().size() != 2) {
            throw new UsageException("gate compare: give the new results file and the stored one (" + COMPARE_USAGE + ")");
        }
        double maxWorse;
        try {
            maxWorse = Double.parseDouble(a.get("max-worse", "0.10"));
        } catch (NumberFormatException e) {
            throw new UsageException("gate compare: --max-worse takes a fraction such as 0.10, found '" + a.get("max-worse", null) + "'");
        }
        if (!(maxWorse >= 0) || Double.isInfinite(maxWorse)) {
            throw new UsageException("gate compare: --max-worse takes a fraction >= 0, found '" + a.get("max-worse", null) + "'");
        }
        Path current = Path.of(a.positional().get(0));
        Path previous = Path.of(a.positional().get(1));
        ResultsComparison.Outcome o = ResultsComparison.compare(current, previous, maxWorse, a.flag("ratios-only"));
        if (a.get("accepted", null) != null) {
            o = o.accepting(ResultsComparison.accepted(Path.of(a.get("accepted", null)), current, previous));
        }
        o.figures().forEach(f -> out.println("  " + f.line()));
        GateResult g = new GateResult("regression", o.pass(), String.format(Locale.ROOT, "%d figures of %s against %s, worst %s (limit %.0f%% worse)%s",
                o.figures().size(), current.getFileName(), previous.getFileName(), o.worst().line(), 100 * maxWorse,
                (o.waived().isEmpty() ? "" : "; accepted: " + String.join(", ", o.waived().stream().map(ResultsComparison.Figure::name).toList()))
                + (o.pass() ? "" : ": over the limit: " + String.join(", ", o.failures().stream().map(ResultsComparison.Figure::name).toList()))));
        out.println(g.line());
        return g.exitCode();
    }
}
