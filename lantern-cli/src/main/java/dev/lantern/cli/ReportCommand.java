package dev.lantern.cli;

import dev.lantern.bench.report.BenchReport;
import dev.lantern.bench.report.CommitOrder;

import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * {@code lantern report DIR --out report.html}: every results file under DIR (bench/results) as one
 * static HTML page, charts drawn inline, nothing fetched ({@link BenchReport}, docs/observability.md).
 * Files it cannot read are listed in the page and counted on standard error, never fatal.
 */
final class ReportCommand {
    static final String USAGE = "report DIR [--out report.html]";

    private ReportCommand() {}

    static int run(List<String> argv, PrintStream out, PrintStream err) {
        Args a = Args.parse("report", argv, Set.of(), Set.of("out"));
        if (a.positional().size() != 1) {
            throw new UsageException("report: expected one results folder (usage: lantern " + USAGE + ")");
        }
        Path dir = Path.of(a.positional().getFirst());
        if (!Files.isDirectory(dir)) {
            throw new UsageException("report: " + dir + " is not a folder (give bench/results)");
        }
        Path file = Path.of(a.get("out", "report.html"));
        Path parent = file.toAbsolutePath().getParent();
        if (Files.isDirectory(file) || parent == null || !Files.isDirectory(parent)) {
            throw new UsageException("report: --out " + file + ": " + (Files.isDirectory(file) ? "is a folder" : "the folder " + parent + " does not exist"));
        }
        BenchReport.Written w;
        try {
            w = BenchReport.write(dir, file, commitOrder(dir, err));
        } catch (UncheckedIOException e) {
            err.println("lantern report: " + ExitStatus.oneLine(e.getMessage()));
            return ExitStatus.BAD_INPUT;
        }
        out.println("report: " + file + " (" + w.files() + " files, " + w.withFigures() + " with figures, " + w.unreadable()
                + " not read, " + w.lanternRegressions() + " regression alerts of Lantern's)");
        for (var f : w.read()) {
            if (!f.readable()) {
                err.println("lantern report: not read: " + f.path() + ": " + ExitStatus.oneLine(f.problem()));
            }
        }
        return ExitStatus.OK;
    }

    /** The repository's history, so that a day's results follow it ({@link CommitOrder#fromGit}); said on stderr when missing. */
    static CommitOrder commitOrder(Path dir, PrintStream err) {
        CommitOrder o = CommitOrder.fromGit(dir);
        if (!o.known()) {
            err.println("lantern report: no git history found for " + dir + "; a day's results are ordered by file name");
        }
        return o;
    }
}
