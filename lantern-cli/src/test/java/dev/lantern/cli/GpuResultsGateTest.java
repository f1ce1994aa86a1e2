package dev.lantern.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The GPU half of the performance gate over synthetic stored results: it passes good files and fails each bad case. */
class GpuResultsGateTest {
    @TempDir
    Path dir;

    static final GpuResultsGate.Order BY_NAME = p -> 0;
    static final GpuResultsGate.Freshness FRESH = c -> Optional.empty();

    /** A forward results file: the small blocks, one GEMM-bound block with steps, and PyTorch beside them. */
    static String forward(String commit, double decoderMs, double torchCompileMs, double compiledOther, double eagerOther) {
        return String.format(Locale.ROOT, """
                {"date": "x", "commit": "%s", "results": [
                 {"case": "decoder-small", "impl": "lantern-graph", "ms": 0.045},
                 {"case": "decoder-small", "impl": "lantern-eager", "ms": 0.2, "steps": [{"op": "gemm 128x1024x1024 NONE", "ms": 0.02}, {"op": "lt_norm", "ms": 0.18}]},
                 {"case": "decoder-small", "impl": "compile-cudagraphs", "ms": 0.11},
                 {"case": "encoder-small", "impl": "lantern-graph", "ms": 0.03},
                 {"case": "encoder-small", "impl": "lantern-eager", "ms": 0.1, "steps": [{"op": "lt_norm", "ms": 0.1}]},
                 {"case": "decoder", "impl": "lantern", "ms": %s, "steps": [{"op": "gemm 16384x4096x4096 NONE", "ms": 9.5}, {"op": "lt_norm", "ms": %s}]},
                 {"case": "decoder", "impl": "lantern-graph", "ms": %s},
                 {"case": "decoder", "impl": "lantern-eager", "ms": 12.0, "steps": [{"op": "gemm 16384x4096x4096 NONE", "ms": 11.0}, {"op": "lt_norm", "ms": %s}]},
                 {"case": "decoder", "impl": "compile", "ms": %s}
                ]}""", commit, decoderMs, compiledOther, decoderMs, eagerOther, torchCompileMs);
    }

    static String train(String commit, double decoderGraph, double decoderEager) {
        return String.format(Locale.ROOT, """
                {"commit": "%s", "results": [
                 {"case": "train decoder bf16", "impl": "lantern graph", "ms": %s},
                 {"case": "train decoder bf16", "impl": "lantern eager", "ms": %s},
                 {"case": "train decoder-small bf16", "impl": "lantern graph", "ms": 0.7},
                 {"case": "train decoder-small bf16", "impl": "lantern eager", "ms": 2.5}
                ]}""", commit, decoderGraph, decoderEager);
    }

    private void write(String name, String text) throws IOException {
        Files.writeString(dir.resolve(name), text);
    }

    private List<GpuResultsGate.Check> evaluate() {
        return GpuResultsGate.evaluate(dir, BY_NAME, FRESH, dir.resolve("misses.tsv"), null);
    }

    private void goodFiles() throws IOException {
        write("2026-11-20-aaaaaaa.json", forward("aaaaaaa", 10.0, 10.8, 0.3, 1.0));
        write("2026-11-28-bbbbbbb.json", forward("bbbbbbb", 10.0, 10.8, 0.3, 1.0));
        write("2026-12-02-ccccccc.json", forward("ccccccc", 10.0, 10.8, 0.3, 1.0));
        write("2026-12-02-ccccccc-train.json", train("ccccccc", 30.0, 40.0));
    }

    @Test
    void goodResultsPassEveryCheck() throws IOException {
        goodFiles();
        List<GpuResultsGate.Check> checks = evaluate();
        assertTrue(checks.stream().allMatch(GpuResultsGate.Check::pass), checks.toString());
        assertTrue(checks.stream().anyMatch(c -> c.name().equals("gemm-bound decoder")), "decoder is 92% GEMM in eager: " + checks);
        assertTrue(checks.stream().noneMatch(c -> c.name().equals("gemm-bound decoder-small")), "decoder-small is 10% GEMM: " + checks);
    }

    @Test
    void aTrainingStepUnderTheFloorFails() throws IOException {
        goodFiles();
        write("2026-12-02-ccccccc-train.json", train("ccccccc", 44.3, 48.2));
        GpuResultsGate.Check c = check("train decoder");
        assertFalse(c.pass(), c.figure());
        assertTrue(c.figure().contains("1.09x"), c.figure());
    }

    @Test
    void aGemmBoundBlockSlowerThanTorchCompileOrWithTooMuchNonGemmTimeFails() throws IOException {
        goodFiles();
        write("2026-12-02-ccccccc.json", forward("ccccccc", 10.0, 9.9, 0.3, 1.0));
        assertFalse(check("gemm-bound decoder").pass());
        write("2026-12-02-ccccccc.json", forward("ccccccc", 10.0, 10.8, 0.6, 1.0));
        assertFalse(check("gemm-bound decoder").pass(), "0.6 ms of non-GEMM time against eager's 1.0");
    }

    @Test
    void aResultsFileTenPercentSlowerThanAWeekBeforeFails() throws IOException {
        goodFiles();
        write("2026-12-02-ccccccc.json", forward("ccccccc", 11.0, 10.8, 0.3, 1.0)); // 10% slower against the same torch
        GpuResultsGate.Check c = check("no regression");
        assertFalse(c.pass(), c.figure());
        assertTrue(c.figure().contains("vs 2026-11-20-aaaaaaa.json"), "the week-old file is the baseline: " + c.figure());
    }

    @Test
    void theBaselineIsAWeekOldOrTheOldestWithinTheWeek() {
        Path a = Path.of("2026-11-20-aaaaaaa.json");
        Path b = Path.of("2026-11-26-bbbbbbb.json");
        Path c = Path.of("2026-11-30-ccccccc.json");
        Path d = Path.of("2026-12-02-ddddddd.json");
        assertEquals(a, GpuResultsGate.baseline(List.of(a, b, c, d)), "11-26 is within the week of 12-02");
        assertEquals(b, GpuResultsGate.baseline(List.of(b, c, d)), "nothing a week old: the oldest");
    }

    @Test
    void staleResultsFail() throws IOException {
        goodFiles();
        List<GpuResultsGate.Check> checks = GpuResultsGate.evaluate(dir, BY_NAME, c -> Optional.of("not the newest GPU code"), null, null);
        assertEquals(2, checks.stream().filter(c -> c.name().startsWith("fresh") && !c.pass()).count(), checks.toString());
    }

    @Test
    void anAcceptedMissPassesForItsFileOnlyAndSaysSo() throws IOException {
        goodFiles();
        write("2026-12-02-ccccccc-train.json", train("ccccccc", 44.3, 48.2));
        write("misses.tsv", "# accepted\n2026-12-02-ccccccc-train.json\ttrain decoder\tissue 16: no flash backward yet\n");
        GpuResultsGate.Check c = check("train decoder");
        assertTrue(c.pass() && c.figure().contains("MISSED, accepted: issue 16"), c.figure());
        write("2026-12-03-ddddddd-train.json", train("ddddddd", 44.3, 48.2));
        assertFalse(check("train decoder").pass(), "a newer results file starts with nothing accepted");
    }

    @Test
    void missingRecordsFail() throws IOException {
        goodFiles();
        write("2026-12-02-ccccccc-train.json", """
                {"commit": "ccccccc", "results": [{"case": "train decoder bf16", "impl": "lantern graph", "ms": 30}]}""");
        assertFalse(check("train decoder").pass());
        assertFalse(check("train decoder-small").pass());
    }

    private GpuResultsGate.Check check(String name) {
        return evaluate().stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow(() -> new AssertionError("no check " + name));
    }
}
