package dev.lantern.trace;

import dev.lantern.weights.JsonParser;
import dev.lantern.weights.JsonValue;
import dev.lantern.weights.JsonValue.JsonArray;
import dev.lantern.weights.JsonValue.JsonNumber;
import dev.lantern.weights.JsonValue.JsonObject;
import dev.lantern.weights.JsonValue.JsonString;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A trace file read back with Lantern's strict JSON parser, for tests: every event checked for the
 * fields Chrome's format needs, the complete events as {@link Ev}s. Other test modules (the CLI)
 * read traces with it too.
 */
public record TraceFile(List<Ev> events, Map<Long, String> tracks, long dropped) {
    /** A complete event, times in microseconds as written. */
    public record Ev(String name, String cat, double ts, double dur, long pid, long tid) {
        public double end() {
            return ts + dur;
        }

        /** Whether {@code inner} lies within this event on the same track (3-decimal rounding allowed). */
        public boolean contains(Ev inner) {
            return inner.tid == tid && inner.ts >= ts - 0.002 && inner.end() <= end() + 0.002;
        }
    }

    public static TraceFile read(Path file) throws IOException {
        JsonObject root = assertInstanceOf(JsonObject.class, JsonParser.parse(Files.readAllBytes(file), 16));
        JsonArray events = assertInstanceOf(JsonArray.class, root.members().get("traceEvents"), "traceEvents");
        List<Ev> out = new ArrayList<>();
        Map<Long, String> tracks = new java.util.LinkedHashMap<>();
        long pid = ProcessHandle.current().pid();
        for (JsonValue v : events.elements()) {
            Map<String, JsonValue> m = assertInstanceOf(JsonObject.class, v).members();
            String ph = str(m, "ph");
            assertEquals(pid, num(m, "pid").longValueOrNull(), "pid of " + m);
            long tid = num(m, "tid").longValueOrNull();
            if (ph.equals("M")) {
                assertEquals("thread_name", str(m, "name"));
                tracks.put(tid, str(assertInstanceOf(JsonObject.class, m.get("args")).members(), "name"));
                continue;
            }
            assertEquals("X", ph, "only complete events: " + m);
            double ts = Double.parseDouble(num(m, "ts").literal());
            double dur = Double.parseDouble(num(m, "dur").literal());
            assertTrue(dur >= 0 && Double.isFinite(ts), "times of " + m);
            out.add(new Ev(str(m, "name"), str(m, "cat"), ts, dur, pid, tid));
        }
        for (Ev e : out) {
            assertTrue(tracks.containsKey(e.tid()), "track " + e.tid() + " of " + e + " has a thread_name");
        }
        Map<String, JsonValue> other = assertInstanceOf(JsonObject.class, root.members().get("otherData")).members();
        return new TraceFile(out, tracks, num(other, "dropped_events").longValueOrNull());
    }

    private static String str(Map<String, JsonValue> m, String key) {
        return assertInstanceOf(JsonString.class, m.get(key), key + " in " + m).value();
    }

    private static JsonNumber num(Map<String, JsonValue> m, String key) {
        return assertInstanceOf(JsonNumber.class, m.get(key), key + " in " + m);
    }

    public List<Ev> named(String name) {
        return events.stream().filter(e -> e.name().equals(name)).toList();
    }

    public List<Ev> category(String cat) {
        return events.stream().filter(e -> e.cat().equals(cat)).sorted(java.util.Comparator.comparingDouble(Ev::ts)).toList();
    }

    /** Events within {@code outer}, in time order. */
    public List<Ev> within(Ev outer, String cat) {
        return category(cat).stream().filter(e -> e != outer && outer.contains(e)).toList();
    }

    /** Every two events on one track are disjoint or one holds the other: the slices form a tree. */
    public void assertNested() {
        for (Ev a : events) {
            for (Ev b : events) {
                if (a == b || a.tid() != b.tid()) {
                    continue;
                }
                boolean disjoint = a.end() <= b.ts() + 0.002 || b.end() <= a.ts() + 0.002;
                assertTrue(disjoint || a.contains(b) || b.contains(a), a + " and " + b + " overlap without nesting");
            }
        }
    }
}
