package dev.lantern.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.weights.JsonParser;
import dev.lantern.weights.JsonValue;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/grafana/lantern-dashboard.json against what Lantern serves: every metric of
 * {@link LanternMetrics#NAMES} is drawn by some panel, every series a query names is one Lantern
 * serves (a renamed metric would leave an empty panel), every query reads the dashboard's data
 * source variable, and panel ids are unique.
 */
class GrafanaDashboardTest {
    private static final Pattern SERIES = Pattern.compile("\\b([a-z][a-z0-9_]*)\\s*(?=[{\\[])");

    @Test
    void drawsEveryMetricAndOnlyThose() throws Exception {
        Path file = Path.of("../docs/grafana/lantern-dashboard.json");
        JsonValue root = JsonParser.parse(Files.readAllBytes(file), 64);
        List<String> exprs = new ArrayList<>();
        Set<Long> ids = new HashSet<>();
        for (JsonValue p : ((JsonValue.JsonArray) obj(root).get("panels")).elements()) {
            Map<String, JsonValue> panel = obj(p);
            assertTrue(ids.add(Long.parseLong(((JsonValue.JsonNumber) panel.get("id")).literal())), "duplicate panel id " + panel.get("id"));
            for (JsonValue t : ((JsonValue.JsonArray) panel.get("targets")).elements()) {
                Map<String, JsonValue> target = obj(t);
                assertEquals("${datasource}", ((JsonValue.JsonString) obj(target.get("datasource")).get("uid")).value());
                exprs.add(((JsonValue.JsonString) target.get("expr")).value());
            }
        }
        Set<String> served = new HashSet<>();
        for (String n : LanternMetrics.NAMES) {
            served.add(n);
        }
        served.addAll(List.of("step_time_ms_bucket", "step_time_ms_sum", "step_time_ms_count"));
        Set<String> drawn = new HashSet<>();
        for (String e : exprs) {
            Matcher m = SERIES.matcher(e);
            while (m.find()) {
                String s = m.group(1);
                if (s.equals("by") || s.equals("rate") || s.equals("increase") || s.equals("sum")) {
                    continue;
                }
                assertTrue(served.contains(s), "the query '" + e + "' reads " + s + ", which Lantern does not serve");
                drawn.add(s.replaceAll("_(bucket|sum|count)$", ""));
            }
        }
        for (String n : LanternMetrics.NAMES) {
            assertTrue(drawn.contains(n), n + " is served but no panel draws it");
        }
    }

    private static Map<String, JsonValue> obj(JsonValue v) {
        return ((JsonValue.JsonObject) v).members();
    }
}
