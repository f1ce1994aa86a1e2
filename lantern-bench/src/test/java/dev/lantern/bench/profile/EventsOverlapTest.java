package dev.lantern.bench.profile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.weights.JsonParser;
import dev.lantern.weights.JsonValue;
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

/** The normalizer's CUDA-event overlap (OverlapProbe's file): read, checked, and used where nsys gave none. */
class EventsOverlapTest {
    @TempDir
    Path dir;

    static final String PROBE = """
            {"method": "cuda-events", "block": "decoder", "batches": 100, "upload_bytes": 134217728,
             "pipelined": {"ms_per_batch": 9.5, "copies": 100, "computes": 100, "copy_busy_us": 400000.0, "compute_busy_us": 900000.0, "overlap_us": 380000.0},
             "serial": {"ms_per_batch": 13.0, "copies": 100, "computes": 100, "copy_busy_us": 400000.0, "compute_busy_us": 900000.0, "overlap_us": 0.0}}
            """;

    private String file(String name, String text) throws IOException {
        Path p = dir.resolve(name);
        Files.writeString(p, text);
        return p.toString();
    }

    private static ProfileReport.Meta meta() {
        return new ProfileReport.Meta("2026-12-02", "abc1234", "NVIDIA H200", "580.95", "decoder", 5, 1, null, "2025.3.0", "x");
    }

    private static Map<String, JsonValue> obj(JsonValue v) {
        return ((JsonObject) v).members();
    }

    private static double num(JsonValue v) {
        return Double.parseDouble(((JsonNumber) v).literal());
    }

    @Test
    void theProbesFileIsRead() {
        EventsOverlap e = EventsOverlap.fromJson("overlap.json", PROBE);
        assertEquals("decoder", e.block());
        assertEquals(100, e.batches());
        assertEquals(134_217_728L, e.uploadBytes());
        assertEquals(95.0, e.pipelined().overlap().pct(), 1e-12);
        assertEquals(0.0, e.serial().overlap().pct(), 0);
        assertEquals(9.5, e.pipelined().msPerBatch(), 0);
        assertEquals(900_000, e.pipelined().overlap().kernelBusyUs(), 0);
    }

    @Test
    void withoutNsysTheTotalsTakeThePipelinedRunAndSaySo() throws IOException {
        List<String> missing = new ArrayList<>(List.of("nsys: wrote a .qdstrm but no .nsys-rep (no QdstrmImporter to convert it)"));
        ProfileReport r = ProfileMain.build(meta(), null, null, null, null, file("overlap.json", PROBE), missing);
        Map<String, JsonValue> root = obj(JsonParser.parse(r.toJson().getBytes(StandardCharsets.UTF_8), 64));
        Map<String, JsonValue> t = obj(root.get("totals"));
        assertEquals(95.0, num(t.get("memcpy_compute_overlap_pct")), 1e-9);
        assertEquals(400_000, num(t.get("memcpy_busy_us")), 1e-9);
        assertEquals(380_000, num(t.get("overlap_us")), 1e-9);
        assertEquals("cuda-events", ((JsonString) t.get("overlap_method")).value());
        Map<String, JsonValue> ev = obj(root.get("overlap_events"));
        assertEquals(0.0, num(obj(ev.get("serial")).get("memcpy_compute_overlap_pct")), 0);
        assertEquals(13.0, num(obj(ev.get("serial")).get("ms_per_batch")), 0);
        assertTrue(missing.stream().noneMatch(m -> m.startsWith("CUDA-event")), missing.toString());
    }

    @Test
    void nsysFiguresWinWhenTheTraceWasRead() throws IOException {
        Path trace = dir.resolve("gpu_trace.csv");
        Files.writeString(trace, NsysSummaryTest.fixture("gpu_trace.csv"));
        List<String> missing = new ArrayList<>();
        ProfileReport r = ProfileMain.build(meta(), null, null, trace.toString(), null, file("overlap.json", PROBE), missing);
        Map<String, JsonValue> root = obj(JsonParser.parse(r.toJson().getBytes(StandardCharsets.UTF_8), 64));
        Map<String, JsonValue> t = obj(root.get("totals"));
        assertEquals(28, num(t.get("memcpy_compute_overlap_pct")), 1e-3, "the trace fixture's figure");
        assertEquals("nsys", ((JsonString) t.get("overlap_method")).value());
        assertEquals(95.0, num(obj(obj(root.get("overlap_events")).get("pipelined")).get("memcpy_compute_overlap_pct")), 1e-9);
    }

    @Test
    void neitherIsNullWithNoMethod() throws IOException {
        List<String> missing = new ArrayList<>();
        ProfileReport r = ProfileMain.build(meta(), null, null, null, null, null, missing);
        Map<String, JsonValue> root = obj(JsonParser.parse(r.toJson().getBytes(StandardCharsets.UTF_8), 64));
        assertInstanceOf(JsonNull.class, obj(root.get("totals")).get("overlap_method"));
        assertInstanceOf(JsonNull.class, root.get("overlap_events"));
    }

    @Test
    void aBadFileIsAMissingLineNotAFailure() throws IOException {
        String[][] cases = {
            {"not json", "{\"method\": "},
            {"another method", PROBE.replace("cuda-events", "nsys")},
            {"no serial run", PROBE.substring(0, PROBE.indexOf(",\n \"serial\"")) + "}"},
            {"overlap beyond the copies", PROBE.replace("\"overlap_us\": 380000.0", "\"overlap_us\": 500000.0")},
            {"a negative time", PROBE.replace("\"copy_busy_us\": 400000.0, \"compute_busy_us\": 900000.0, \"overlap_us\": 0.0",
                    "\"copy_busy_us\": -1, \"compute_busy_us\": 900000.0, \"overlap_us\": 0.0")},
        };
        for (String[] c : cases) {
            List<String> missing = new ArrayList<>();
            ProfileReport r = ProfileMain.build(meta(), null, null, null, null, file("bad.json", c[1]), missing);
            assertEquals(1 + 4, missing.size(), c[0] + ": " + missing);
            assertTrue(missing.getLast().startsWith("CUDA-event overlap (OverlapProbe): bad.json"), c[0] + ": " + missing.getLast());
            Map<String, JsonValue> t = obj(obj(JsonParser.parse(r.toJson().getBytes(StandardCharsets.UTF_8), 64)).get("totals"));
            assertInstanceOf(JsonNull.class, t.get("memcpy_compute_overlap_pct"), c[0]);
        }
        assertThrows(ProfileFormatException.class, () -> EventsOverlap.fromJson("x.json", "[1, 2]"));
    }
}
