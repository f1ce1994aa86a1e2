package dev.lantern.cli;

import dev.lantern.weights.JsonParser;
import dev.lantern.weights.JsonValue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code lantern gate determinism}: {@code lantern determinism} in strict mode on a small block, its
 * runs in separate JVMs with 1 and 2 CPU threads in turn, read into one gate line. Passes when every
 * run is bit-identical to the first, which {@link RunDifference} checks field by field: the graph
 * hash, the cache key, the kernel cache keys, the autotune choices, then the output bits. The gate
 * is {@link #evaluate} over the command's JSON report, so that a report of differing runs is shown
 * to fail by a test without a nondeterministic kernel in the product.
 */
final class DeterminismGate {
    static final String USAGE = "gate determinism [--runs N] [--config NAME] [--threads T1,T2,...]";

    private DeterminismGate() {}

    static int run(List<String> argv, PrintStream out, PrintStream err) {
        Args a = Args.parse("gate determinism", argv, Set.of(), Set.of("runs", "config", "threads")).noPositional("gate determinism");
        List<String> cmd = new ArrayList<>(List.of("--runs", a.get("runs", "3"), "--config", a.get("config", "cpu-small"),
                "--threads", a.get("threads", "1,2"), "--deterministic", "--json"));
        ByteArrayOutputStream report = new ByteArrayOutputStream();
        int code = DeterminismCommand.run(cmd, new PrintStream(report, true, StandardCharsets.UTF_8), err);
        String json = report.toString(StandardCharsets.UTF_8).strip();
        GateResult r = json.isEmpty() ? new GateResult("determinism", false, "lantern determinism printed no report (exit " + code + ")")
                : evaluate(json);
        out.println(r.line());
        return r.exitCode();
    }

    /** The gate line for one {@code lantern determinism --json} report. */
    static GateResult evaluate(String reportJson) {
        Map<String, JsonValue> j = ((JsonValue.JsonObject) JsonParser.parse(reportJson.getBytes(StandardCharsets.UTF_8), 16)).members();
        boolean strict = j.get("deterministic") instanceof JsonValue.JsonBoolean b && b.value();
        boolean identical = j.get("bit_identical") instanceof JsonValue.JsonBoolean b && b.value();
        String runs = j.get("runs") instanceof JsonValue.JsonNumber n ? n.literal() : "?";
        int kernels = j.get("kernel_keys") instanceof JsonValue.JsonArray k ? k.elements().size() : 0;
        String graph = j.get("graph_hash") instanceof JsonValue.JsonString s ? s.value() : "?";
        String threads = j.get("threads") instanceof JsonValue.JsonArray t
                ? String.join(",", t.elements().stream().map(v -> v instanceof JsonValue.JsonNumber x ? x.literal() : "default").toList()) : "?";
        String where = runs + " runs in separate JVMs (threads " + threads + "), graph " + graph.substring(0, Math.min(12, graph.length()))
                + ", " + kernels + " kernel keys";
        if (!strict) {
            return new GateResult("determinism", false, where + ": not in strict mode (--deterministic), which the gate requires");
        }
        if (!identical) {
            return new GateResult("determinism", false, where + ": not bit-identical, first difference " + difference(j.get("first_difference")));
        }
        if (kernels == 0) {
            return new GateResult("determinism", false, where + ": no kernel keys reported, nothing compared");
        }
        return new GateResult("determinism", true, where + ": graph hash, kernel keys, autotune choices and outputs bit-identical");
    }

    private static String difference(JsonValue d) {
        if (!(d instanceof JsonValue.JsonObject o)) {
            return "(not reported)";
        }
        StringBuilder b = new StringBuilder();
        o.members().forEach((k, v) -> b.append(b.isEmpty() ? "" : " ").append(k).append('=').append(switch (v) {
            case JsonValue.JsonString s -> s.value();
            case JsonValue.JsonNumber n -> n.literal();
            case JsonValue.JsonArray arr -> arr.elements().stream().map(x -> x instanceof JsonValue.JsonNumber n ? n.literal() : "?").toList().toString();
            default -> v.toString();
        }));
        return b.toString();
    }
}
