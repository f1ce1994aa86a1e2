package dev.lantern.bench.report;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code lantern report}'s reading and page without a browser: every results file of the repository
 * read and charted, bad files listed with their reason instead of failing, regressions flagged at
 * exactly the 5 % line in both directions of "worse", a day's runs in commit order, no network.
 */
class ReportTest {
    static final Path RESULTS = Path.of("../bench/results");

    @TempDir
    Path dir;

    static String bench(String commit, String date, double lanternMs, double torchMs) {
        return """
                {"date": "%s", "commit": "%s", "gpu": "NVIDIA H200, 580", "results": [
                 {"case": "decoder", "impl": "lantern", "ms": %s, "steps": [{"op": "lt_norm [registers]", "ms": 0.5},
                   {"op": "gemm 16x16x16 NONE", "ms": 1.5}],
                  "kernel_figures": [{"kernel": 0, "name": "k0_rms_norm", "bytes": 1000000, "ms": 0.5, "dram_gbps": 2.0,
                   "launches": [{"step": 0, "op": "lt_norm [registers]", "ms": 0.5, "grid": [132, 1, 1], "block": [256, 1, 1],
                    "shared_bytes": 0, "blocks_per_sm": 8, "occupancy_pct": 100.0, "grid_occupancy_pct": 12.5, "waves": 0.125}]}]},
                 {"case": "decoder", "impl": "compile", "ms": %s}]}
                """.formatted(date, commit, lanternMs, torchMs);
    }

    static String matmul(String commit, double lantern, double ort) {
        return """
                {"benchmark": "matmul", "commit": "%s", "threads": 1, "machine": {"cpu": "AMD EPYC", "cores": 2},
                 "summary": [{"shape_MxKxN": "64x64x64", "lantern": {"gflops_median": %s}, "onnxruntime": {"gflops_median": %s}}]}
                """.formatted(commit, lantern, ort);
    }

    @Test
    void badFilesAreListedAndRegressionsFlaggedAtFivePercent() throws IOException {
        Path gpu = Files.createDirectories(dir.resolve("h200"));
        Path cpu = Files.createDirectories(dir.resolve("cpu"));
        Files.writeString(gpu.resolve("2026-11-30-aaaaaaa.json"), bench("aaaaaaa", "2026-11-30", 100, 90));
        Files.writeString(gpu.resolve("2026-11-30-bbbbbbb.json"), bench("bbbbbbb", "2026-11-30", 104.9, 80)); // 4.9 % worse: no alert
        Files.writeString(gpu.resolve("2026-12-01-ccccccc.json"), bench("ccccccc", "2026-12-01", 111.3, 81)); // 6.1 % worse than 104.9
        Files.writeString(gpu.resolve("2026-12-01-ccccccc.txt"), "case lantern\ndecoder 111.3\n");
        Files.writeString(cpu.resolve("2026-12-01-ddddddd-matmul.json"), matmul("ddddddd", 100, 50));
        Files.writeString(cpu.resolve("2026-12-02-eeeeeee-matmul.json"), matmul("eeeeeee", 94, 50)); // rate 6 % lower: alert
        Files.writeString(cpu.resolve("soak.json"), """
                {"date": "2026-12-02", "commit": "fffffff", "machine": {"cpu": "AMD EPYC", "cores": 2}, "results": {"device": "sim",
                 "alloc_frag_pct_median": 11.5, "alloc_frag_pct_max": 80.0, "waste_pct_median": 40.0,
                 "timeline": [{"t_s": 0, "reserved_bytes": 0, "allocated_bytes": 0, "frag_pct": 0},
                              {"t_s": 1.5, "reserved_bytes": 4194304, "allocated_bytes": 2097152, "frag_pct": 25.0}]}}
                """);
        Map<String, String> bad = Map.of(
                "truncated.json", "{\"results\": [",
                "nan.json", "{\"results\": [{\"case\": \"x\", \"ms\": NaN}]}",
                "array.json", "[1, 2, 3]",
                "unknown.json", "{\"hello\": \"world\"}",
                "empty.json", "");
        for (Map.Entry<String, String> e : bad.entrySet()) {
            Files.writeString(cpu.resolve(e.getKey()), e.getValue());
        }
        Files.write(cpu.resolve("latin1.txt"), new byte[] {(byte) 0xE9, 'a', (byte) 0xFF});

        Path out = dir.resolve("report.html");
        BenchReport.Written w = BenchReport.write(dir, out, CommitOrder.none());
        assertEquals(13, w.files());
        assertEquals(6, w.unreadable(), "five bad JSON files and a text file that is not UTF-8");
        assertEquals(6, w.withFigures());
        for (ResultFile f : w.read()) {
            if (bad.containsKey(f.path().substring(4)) || f.path().endsWith("latin1.txt")) {
                assertFalse(f.readable(), f.path());
                assertFalse(f.problem().isBlank());
            }
        }
        assertTrue(w.read().stream().filter(f -> f.path().endsWith("unknown.json")).findFirst().orElseThrow().problem().contains("hello"));

        // exactly the two regressions: GPU decoder 104.9 -> 111.3 ms, CPU matmul 100 -> 94 GFLOP/s
        assertEquals(2, w.lanternRegressions());
        List<Trends.Series> dec = Trends.byCase(w.read(), "NVIDIA H200", CommitOrder.none()).get("decoder");
        Trends.Series lantern = dec.stream().filter(s -> s.impl().equals("lantern")).findFirst().orElseThrow();
        List<Trends.Regression> r = Trends.regressions(lantern);
        assertEquals(1, r.size());
        assertEquals(100 * (111.3 - 104.9) / 104.9, r.getFirst().pct(), 1e-9);
        assertEquals("ccccccc", r.getFirst().after().commit());
        Trends.Series mm = Trends.byCase(w.read(), "AMD EPYC (2 cores)", CommitOrder.none()).get("matmul 64x64x64 t1").getFirst();
        assertTrue(mm.higherIsBetter());
        assertEquals(6.0, Trends.regressions(mm).getFirst().pct(), 1e-9);

        String html = Files.readString(out);
        for (ResultFile f : w.read()) {
            if (f.readable() && !f.kind().equals("text")) {
                assertTrue(html.contains("class=\"chart\" data-chart=\"file\" data-file=\"" + f.path() + "\""), "a chart for " + f.path());
            }
            if (!f.readable()) {
                assertTrue(html.contains("<li class=\"unreadable\" data-file=\"" + f.path() + "\">"), "listed: " + f.path());
            }
        }
        assertTrue(html.contains("data-chart=\"soak\" data-file=\"cpu/soak.json\""), "the soak's memory over time");
        assertTrue(html.contains("k0_rms_norm") && html.contains(">100.0<"), "the kernel table with its occupancy");
        assertEquals(2, count(html, "data-chart=\"trend\""), "decoder on the GPU, matmul on the CPU");
        assertEquals(2, count(html, "class=\"regression\""), "each chart rings its regression");
        assertNoNetwork(html);
    }

    @Test
    void aDaysRunsFollowTheCommitHistory() throws IOException {
        Path gpu = Files.createDirectories(dir.resolve("h200"));
        Files.writeString(gpu.resolve("a.json"), bench("fffffff", "2026-11-30", 100, 90));
        Files.writeString(gpu.resolve("b.json"), bench("1111111", "2026-11-30", 120, 90));
        List<ResultFile> files = ResultsReader.read(dir);
        // by path, fffffff (a.json) comes first and 1111111 looks 20 % slower; history says 1111111 came first
        assertEquals(1, Trends.regressions(lantern(files, CommitOrder.none())).size());
        CommitOrder history = CommitOrder.of(List.of("1111111aaaa", "fffffffbbbb"));
        Trends.Series s = lantern(files, history);
        assertEquals(List.of("1111111", "fffffff"), s.points().stream().map(Trends.Point::commit).toList());
        assertTrue(Trends.regressions(s).isEmpty(), "120 -> 100 ms is an improvement");
    }

    private static Trends.Series lantern(List<ResultFile> files, CommitOrder order) {
        return Trends.byCase(files, "NVIDIA H200", order).get("decoder").stream().filter(x -> x.impl().equals("lantern")).findFirst().orElseThrow();
    }

    @Test
    void everyResultsFileOfTheRepositoryIsReadAndCharted() throws IOException {
        Path out = dir.resolve("repo.html");
        BenchReport.Written w = BenchReport.write(RESULTS, out, CommitOrder.none());
        long json;
        try (var s = Files.walk(RESULTS)) {
            json = s.filter(p -> p.toString().endsWith(".json")).count();
        }
        assertTrue(json >= 70, "the repository's results: " + json);
        String html = Files.readString(out);
        for (ResultFile f : w.read()) {
            assertNull(f.problem(), f.path() + " is a results file of the repository and must be read");
            if (!f.kind().equals("text")) {
                assertFalse(f.figures().isEmpty() && f.timeline().isEmpty(), f.path());
                assertTrue(html.contains("data-file=\"" + f.path() + "\""), "a chart for " + f.path());
            }
        }
        assertEquals(json, w.withFigures());
        assertTrue(html.contains("data-machine=\"NVIDIA H200\"") && html.contains("data-machine=\"AMD EPYC (2 cores)\""));
        assertTrue(count(html, "data-chart=\"trend\"") >= 10);
        assertNoNetwork(html);
    }

    static void assertNoNetwork(String html) {
        assertFalse(html.contains("<script"), "no script");
        assertFalse(html.contains("src="), "nothing loaded");
        Matcher m = Pattern.compile("https?://[^\"\\s<]+").matcher(html);
        while (m.find()) {
            assertEquals("http://www.w3.org/2000/svg", m.group(), "only the SVG namespace name, which is never fetched");
        }
    }

    static int count(String s, String what) {
        int n = 0;
        for (int i = s.indexOf(what); i >= 0; i = s.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }
}
