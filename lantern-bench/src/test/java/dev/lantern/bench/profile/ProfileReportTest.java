package dev.lantern.bench.profile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.bench.report.Figure;
import dev.lantern.bench.report.KernelRow;
import dev.lantern.bench.report.ResultFile;
import dev.lantern.bench.report.ResultsReader;
import dev.lantern.weights.JsonParser;
import dev.lantern.weights.JsonValue;
import dev.lantern.weights.JsonValue.JsonArray;
import dev.lantern.weights.JsonValue.JsonNull;
import dev.lantern.weights.JsonValue.JsonNumber;
import dev.lantern.weights.JsonValue.JsonObject;
import dev.lantern.weights.JsonValue.JsonString;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProfileReportTest {
    @TempDir
    Path dir;

    private String copy(String fixture) throws IOException {
        Path p = dir.resolve(fixture);
        Files.writeString(p, NsysSummaryTest.fixture(fixture));
        return p.toString();
    }

    private static ProfileReport.Meta meta(int forwards, int ncuForwards) {
        return new ProfileReport.Meta("2026-12-02", "abc1234", "NVIDIA H200", "580.95", "decoder", forwards, ncuForwards,
                "2025.3.1", "2025.3.0", "ProfileProbe --tune decoder");
    }

    private static Map<String, JsonValue> parse(String json) {
        return ((JsonObject) JsonParser.parse(json.getBytes(StandardCharsets.UTF_8), 64)).members();
    }

    private static double num(JsonValue v) {
        return Double.parseDouble(((JsonNumber) v).literal());
    }

    private static Map<String, JsonValue> obj(JsonValue v) {
        return ((JsonObject) v).members();
    }

    @Test
    void everyPartJoinedByKernelName() throws IOException {
        List<String> missing = new ArrayList<>();
        ProfileReport r = ProfileMain.build(meta(10, 1), copy("kern_sum.csv"), copy("mem_time_sum.csv"), copy("gpu_trace.csv"),
                copy("ncu_raw.csv"), missing);
        assertTrue(missing.isEmpty(), missing.toString());
        Map<String, JsonValue> root = parse(r.toJson());
        assertEquals("NVIDIA H200", ((JsonString) root.get("gpu")).value());
        Map<String, JsonValue> t = obj(root.get("totals"));
        double kernelUs = 24_000 + 17_500 + 11_650 + 3_500 + 1_630;
        assertEquals(kernelUs, num(t.get("kernel_us")), 1e-3);
        assertEquals(kernelUs / 10, num(t.get("kernel_us_per_forward")), 1e-3);
        assertEquals(60, num(t.get("kernel_launches")), 0);
        assertEquals(12_000 + 7_800, num(t.get("memcpy_us")), 1e-3);
        assertEquals(200, num(t.get("memset_us")), 1e-3);
        assertEquals(28, num(t.get("memcpy_compute_overlap_pct")), 1e-3);
        assertEquals(5, num(t.get("ncu_launches_profiled")), 0);
        assertEquals(2_400 + 1_750 + 2 * 1_000 + 163, num(t.get("ncu_us_per_forward")), 1e-3);

        List<JsonValue> kernels = ((JsonArray) root.get("kernels")).elements();
        assertEquals(5, kernels.size(), "every ncu kernel matched one of nsys's");
        Map<String, JsonValue> attention = obj(kernels.get(1));
        assertEquals("lt_k5_flash_attention_causal", ((JsonString) attention.get("name")).value());
        assertEquals(JsonValue.JsonBoolean.class, attention.get("lantern").getClass());
        assertEquals(100 * 17_500 / kernelUs, num(attention.get("gpu_time_pct")), 1e-3);
        assertEquals(1_750, num(attention.get("mean_us")), 1e-3);
        Map<String, JsonValue> an = obj(attention.get("ncu"));
        assertEquals(45.1, num(an.get("achieved_occupancy_pct")), 1e-9);
        assertEquals(88, num(an.get("l2_hit_pct")), 1e-9);
        assertEquals(500, num(an.get("dram_gbps")), 1e-9);
        Map<String, JsonValue> cutlass = obj(kernels.get(2));
        assertEquals("cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_tn_align8>",
                ((JsonString) cutlass.get("name")).value());
        assertEquals(32.5, num(obj(cutlass.get("ncu")).get("achieved_occupancy_pct")), 1e-9);
        Map<String, JsonValue> epilogue = obj(obj(kernels.get(4)).get("ncu"));
        assertInstanceOf(JsonNull.class, epilogue.get("achieved_occupancy_pct"), "not collected: null");
        assertEquals(163, num(epilogue.get("duration_us")), 1e-9);
    }

    @Test
    void aPartialRunStillWritesAFileThatSaysWhatIsMissing() throws IOException {
        Path empty = Files.createFile(dir.resolve("empty.csv"));
        Path bad = dir.resolve("bad.csv");
        Files.writeString(bad, "Start (ns),Duration (ns),Name\n0,\"lt_k0\n");
        List<String> missing = new ArrayList<>(List.of("ncu: not found (PATH, /usr/local/cuda/bin, /opt/nvidia/nsight-compute)"));
        ProfileReport r = ProfileMain.build(meta(10, 0), copy("kern_sum.csv"), empty.toString(), bad.toString(), null, missing);
        assertEquals(4, missing.size(), missing.toString());
        assertTrue(missing.get(1).contains("is empty"), missing.get(1));
        assertTrue(missing.get(2).contains("never closed"), missing.get(2));
        assertTrue(missing.get(3).startsWith("ncu raw CSV: not given"), missing.get(3));
        Map<String, JsonValue> root = parse(r.toJson());
        Map<String, JsonValue> t = obj(root.get("totals"));
        assertInstanceOf(JsonNull.class, t.get("memcpy_compute_overlap_pct"));
        assertInstanceOf(JsonNull.class, t.get("memcpy_us"));
        assertEquals(58_280, num(t.get("kernel_us")), 1e-3);
        for (JsonValue k : ((JsonArray) root.get("kernels")).elements()) {
            assertInstanceOf(JsonNull.class, obj(k).get("ncu"));
        }
        assertEquals(4, ((JsonArray) root.get("missing")).elements().size());
    }

    @Test
    void theReportReadsTheFileAsAProfile() throws IOException {
        Path results = Files.createDirectories(dir.resolve("results/h200"));
        List<String> missing = new ArrayList<>();
        Files.writeString(results.resolve("2026-12-02-abc1234-profile-decoder.json"), ProfileMain.build(meta(10, 1), copy("kern_sum.csv"),
                copy("mem_time_sum.csv"), copy("gpu_trace.csv"), copy("ncu_raw.csv"), missing).toJson());
        // ncu alone: the figure comes from ncu's durations
        Files.writeString(results.resolve("2026-12-02-abc1234-profile-ncu-only.json"),
                ProfileMain.build(meta(10, 1), null, null, null, copy("ncu_raw.csv"), missing).toJson());
        List<ResultFile> files = ResultsReader.read(dir.resolve("results"));
        assertEquals(2, files.size());
        for (ResultFile f : files) {
            assertTrue(f.readable(), f.path() + ": " + f.problem());
            assertEquals("profile", f.kind());
            assertEquals("NVIDIA H200", f.machine());
            assertEquals("abc1234", f.commit());
        }
        ResultFile full = files.stream().filter(f -> f.path().endsWith("decoder.json")).findFirst().orElseThrow();
        Figure ms = full.figures().stream().filter(f -> f.metric().equals("kernel ms per forward")).findFirst().orElseThrow();
        assertEquals(5.828, ms.value(), 1e-9);
        assertFalse(ms.higherIsBetter());
        assertEquals(28, full.figures().stream().filter(f -> f.unit().equals("%")).findFirst().orElseThrow().value(), 1e-9);
        KernelRow attention = full.kernels().get(1);
        assertEquals(1.75, attention.ms(), 1e-9, "per forward");
        assertEquals(45.1, attention.occupancyPct(), 1e-9);
        assertEquals(500, attention.dramGbps(), 1e-9);
        ResultFile ncuOnly = files.stream().filter(f -> f.path().endsWith("ncu-only.json")).findFirst().orElseThrow();
        assertEquals(6.313, ncuOnly.figures().getFirst().value(), 1e-9);
    }
}
