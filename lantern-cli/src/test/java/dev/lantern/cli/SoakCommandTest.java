package dev.lantern.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class SoakCommandTest {
    @Test
    void commandPrintsJsonAndRejectsBadArguments() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = SoakCommand.run(new String[] {"--max-ops", "50000", "--seed", "3", "--json"},
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        String json = out.toString(StandardCharsets.UTF_8).strip();
        assertTrue(code == 0 || code == 1, "exit " + code + ": " + err);
        for (String key : new String[] {"ops", "seconds", "alloc_frag_pct_median", "alloc_frag_pct_max",
                "waste_pct_median", "leaked_bytes", "oom_retries", "placement_digest", "device"}) {
            assertTrue(json.contains("\"" + key + "\":"), key + " missing from " + json);
        }
        assertTrue(json.startsWith("{") && json.endsWith("}") && json.lines().count() == 1, json);
        assertTrue(json.contains("\"ops\":50000"), json);
        timelineIsTheAllocatorsMemoryOverTime(json);

        err.reset();
        assertEquals(2, SoakCommand.run(new String[] {"--seconds", "abc"}, System.out,
                new PrintStream(err, true, StandardCharsets.UTF_8)));
        assertEquals(1, err.toString(StandardCharsets.UTF_8).lines().count());
        err.reset();
        assertEquals(2, SoakCommand.run(new String[] {"--device", "tpu"}, System.out,
                new PrintStream(err, true, StandardCharsets.UTF_8)));
        err.reset();
        assertEquals(2, SoakCommand.run(new String[] {"--max-ops", "10", "--device", "cuda"}, System.out,
                new PrintStream(err, true, StandardCharsets.UTF_8)));
        String msg = err.toString(StandardCharsets.UTF_8);
        assertTrue(msg.contains("no CUDA device: "), msg);
        assertEquals(1, msg.lines().count());
    }

    /** The "timeline" that lantern report charts: parses, at most SoakTimeline.MAX*2 points, time ordered, allocated within reserved. */
    static void timelineIsTheAllocatorsMemoryOverTime(String json) {
        var root = (dev.lantern.weights.JsonValue.JsonObject) dev.lantern.weights.JsonParser.parse(json.getBytes(StandardCharsets.UTF_8), 8);
        var tl = (dev.lantern.weights.JsonValue.JsonArray) root.members().get("timeline");
        assertTrue(tl.elements().size() >= 2 && tl.elements().size() < 2 * SoakTimeline.MAX, "points: " + tl.elements().size());
        double last = -1;
        boolean reservedSomething = false;
        for (var v : tl.elements()) {
            var m = ((dev.lantern.weights.JsonValue.JsonObject) v).members();
            double t = Double.parseDouble(((dev.lantern.weights.JsonValue.JsonNumber) m.get("t_s")).literal());
            long reserved = ((dev.lantern.weights.JsonValue.JsonNumber) m.get("reserved_bytes")).longValueOrNull();
            long allocated = ((dev.lantern.weights.JsonValue.JsonNumber) m.get("allocated_bytes")).longValueOrNull();
            double frag = Double.parseDouble(((dev.lantern.weights.JsonValue.JsonNumber) m.get("frag_pct")).literal());
            assertTrue(t >= last, "time ordered");
            assertTrue(allocated <= reserved && allocated >= 0, allocated + " of " + reserved);
            assertTrue(frag >= 0 && frag <= 100, "frag " + frag);
            reservedSomething |= reserved > 0;
            last = t;
        }
        assertTrue(reservedSomething, "the soak allocates");
    }
}
