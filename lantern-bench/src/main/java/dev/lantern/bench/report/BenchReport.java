package dev.lantern.bench.report;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

/**
 * {@code lantern report}'s work: every file under a results folder read ({@link ResultsReader}),
 * rendered ({@link ReportHtml}) and written to one HTML file through a temporary file and a move.
 */
public final class BenchReport {
    /** What was written: the files seen, those with figures, those not read, the Lantern regressions flagged. */
    public record Written(int files, int withFigures, int unreadable, int lanternRegressions, List<ResultFile> read) {}

    private BenchReport() {}

    static void readableByAll(Path p) {
        try {
            Files.setPosixFilePermissions(p, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        } catch (UnsupportedOperationException | IOException e) {
            // not a POSIX file system: its default permissions stay
        }
    }

    public static Written write(Path resultsDir, Path out, CommitOrder order) {
        List<ResultFile> files = ResultsReader.read(resultsDir);
        String html = ReportHtml.render("Lantern benchmark report: " + resultsDir.getFileName(), files, order);
        Path abs = out.toAbsolutePath();
        try {
            Path tmp = Files.createTempFile(abs.getParent(), "." + abs.getFileName(), ".tmp");
            try {
                readableByAll(tmp); // a temporary file is private to its owner; the report is for anyone
                Files.writeString(tmp, html, StandardCharsets.UTF_8);
                try {
                    Files.move(tmp, abs, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(tmp, abs, StandardCopyOption.REPLACE_EXISTING);
                }
            } finally {
                Files.deleteIfExists(tmp);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + out + ": " + e.getMessage(), e);
        }
        int regressions = 0;
        for (String m : files.stream().filter(ResultFile::readable).map(ResultFile::machine).distinct().toList()) {
            for (List<Trends.Series> list : Trends.byCase(files, m, order).values()) {
                for (Trends.Series s : list) {
                    if (s.lantern()) {
                        regressions += Trends.regressions(s).size();
                    }
                }
            }
        }
        int withFigures = (int) files.stream().filter(f -> f.readable() && !f.kind().equals("text")).count();
        int unreadable = (int) files.stream().filter(f -> !f.readable()).count();
        return new Written(files.size(), withFigures, unreadable, regressions, files);
    }
}
