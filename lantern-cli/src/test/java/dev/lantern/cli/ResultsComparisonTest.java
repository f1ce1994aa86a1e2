package dev.lantern.cli;

import dev.lantern.ir.LanternException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The performance gate's regression check, on a stored GPU results file and on the gate's own form:
 * a file 11 % slower fails, naming the figures; 9 % slower passes; a ratio 12 % down fails in
 * ratios-only mode while the times are ignored; files with nothing in common are an error.
 */
class ResultsComparisonTest {
    /** A stored H200 results file (58 records, 26 of them Lantern's, with eager beside compiled for the blocks and PyTorch beside all). */
    static final Path STORED = Path.of("../bench/results/h200/2026-12-01-6b01297.json");
    static final Pattern MS = Pattern.compile("(\"ms\": )([0-9.]+)");

    @TempDir
    Path dir;

    /** A copy of {@code file} with every {@code "ms"} value times {@code factor}. */
    Path scaled(Path file, double factor, String name) throws IOException {
        Matcher m = MS.matcher(Files.readString(file));
        StringBuilder b = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(b, m.group(1) + String.format(Locale.ROOT, "%.6f", Double.parseDouble(m.group(2)) * factor));
        }
        m.appendTail(b);
        Path out = dir.resolve(name);
        Files.writeString(out, b.toString());
        return out;
    }

    @Test
    void aResultsFileTenPercentSlowerFailsAndNamesTheFigures() throws IOException {
        Path slower = scaled(STORED, 1.11, "slower.json");
        ResultsComparison.Outcome o = ResultsComparison.compare(slower, STORED, 0.10, false);
        assertFalse(o.pass());
        long times = o.figures().stream().filter(f -> f.name().endsWith(" ms")).count();
        assertEquals(26, times, "every Lantern record's time is compared (the 32 peers' are not)");
        assertEquals(times, o.failures().size(), "each time is 11 % worse; the ratios are unchanged");
        assertTrue(o.worst().worse() > 0.109 && o.worst().worse() < 0.111, o.worst().line());
        assertTrue(o.failures().stream().anyMatch(f -> f.name().equals("decoder/lantern ms")), o.failures().toString());

        MainTest.Run r = MainTest.run("gate", "compare", slower.toString(), STORED.toString());
        assertEquals(1, r.code(), r.err());
        assertTrue(r.out().lines().anyMatch(l -> l.startsWith("GATE regression FAIL 48 figures of slower.json against 2026-12-01-6b01297.json")),
                r.out());
    }

    @Test
    void nineAndAHalfPercentSlowerPasses() throws IOException {
        Path slower = scaled(STORED, 1.095, "a-bit-slower.json");
        assertTrue(ResultsComparison.compare(slower, STORED, 0.10, false).pass());
        MainTest.Run r = MainTest.run("gate", "compare", slower.toString(), STORED.toString());
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.out().contains("GATE regression PASS "), r.out());
    }

    /** A results file of the performance gate's form: compiled and eager CPU ms of cpu-small at one thread. */
    Path gateFile(String name, double compiledMs, double eagerMs) throws IOException {
        Path f = dir.resolve(name);
        Files.writeString(f, Json.write(Map.of("records", List.of(
                Map.of("case", "cpu-small", "impl", "lantern", "threads", 1, "ms", compiledMs),
                Map.of("case", "cpu-small", "impl", "lantern-eager", "threads", 1, "ms", eagerMs)))));
        return f;
    }

    @Test
    void inRatiosOnlyModeAFallingSpeedupFailsWhateverTheMachinesSpeed() throws IOException {
        Path stored = gateFile("stored.json", 4.0, 20.0);                  // 5.0x
        Path slowerMachine = gateFile("slow-machine.json", 8.0, 40.0);     // 5.0x on a machine twice as slow
        Path regressed = gateFile("regressed.json", 4.6, 20.4);            // 4.43x: 11.3 % down
        ResultsComparison.Outcome same = ResultsComparison.compare(slowerMachine, stored, 0.10, true);
        assertTrue(same.pass(), same.figures().toString());
        assertEquals(List.of("cpu-small/t1 eager/compiled"), same.figures().stream().map(ResultsComparison.Figure::name).toList());
        assertFalse(ResultsComparison.compare(slowerMachine, stored, 0.10, false).pass(), "the times are 100 % worse");
        ResultsComparison.Outcome down = ResultsComparison.compare(regressed, stored, 0.10, true);
        assertFalse(down.pass());
        assertEquals(0.113, down.worst().worse(), 1e-3);
        MainTest.Run r = MainTest.run("gate", "compare", regressed.toString(), stored.toString(), "--ratios-only");
        assertEquals(1, r.code());
        assertTrue(r.out().contains("over the limit: cpu-small/t1 eager/compiled"), r.out());
    }

    @Test
    void filesWithNothingInCommonAreAnErrorNotAPass() throws IOException {
        Path stored = gateFile("stored.json", 4.0, 20.0);
        Path other = dir.resolve("other.json");
        Files.writeString(other, Json.write(Map.of("records", List.of(Map.of("case", "decoder-small", "impl", "lantern", "ms", 1.0)))));
        assertThrows(LanternException.class, () -> ResultsComparison.compare(other, stored, 0.10, false));
        Path notResults = dir.resolve("soak.json");
        Files.writeString(notResults, "{\"ops\": 5}");
        assertThrows(LanternException.class, () -> ResultsComparison.compare(notResults, stored, 0.10, false));
        assertEquals(1, MainTest.run("gate", "compare", notResults.toString(), stored.toString()).code());
        assertEquals(2, MainTest.run("gate", "compare", stored.toString()).code());
        assertEquals(2, MainTest.run("gate", "compare", stored.toString(), stored.toString(), "--max-worse", "x").code());
    }
}
