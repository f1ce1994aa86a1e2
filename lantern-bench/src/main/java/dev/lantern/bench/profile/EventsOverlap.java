package dev.lantern.bench.profile;

import dev.lantern.weights.JsonParser;
import dev.lantern.weights.JsonValue;
import dev.lantern.weights.JsonValue.JsonNumber;
import dev.lantern.weights.JsonValue.JsonObject;
import dev.lantern.weights.JsonValue.JsonString;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The memcpy/compute overlap measured from CUDA events ({@code OverlapProbe} in lantern-cuda's test
 * classes, run by {@code scripts/gpu-profile}): the block fed through Lantern's input pipeline with
 * its uploads on a copy stream beside the forwards ({@code pipelined}) and on the forwards' stream
 * ({@code serial}). The figure that stands in for nsys's when nsys gives none is the pipelined one.
 */
public record EventsOverlap(String block, int batches, long uploadBytes, Run pipelined, Run serial) {
    /** One run: ms per batch (upload and forward) and its busy times, as an {@link Overlap.Result} in µs. */
    public record Run(double msPerBatch, Overlap.Result overlap) {
        Map<String, Object> toMap() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("ms_per_batch", msPerBatch);
            m.put("memcpy_busy_us", overlap.memcpyBusyUs());
            m.put("kernel_busy_us", overlap.kernelBusyUs());
            m.put("overlap_us", overlap.overlapUs());
            m.put("memcpy_compute_overlap_pct", overlap.pct());
            return m;
        }
    }

    public static EventsOverlap fromJson(String source, String text) {
        JsonValue v;
        try {
            v = JsonParser.parse(text.getBytes(StandardCharsets.UTF_8), 8);
        } catch (RuntimeException e) {
            throw new ProfileFormatException(source + ": not JSON (" + e.getMessage() + ")");
        }
        if (!(v instanceof JsonObject root)) {
            throw new ProfileFormatException(source + ": not a JSON object");
        }
        String method = string(root, "method", source);
        if (!method.equals("cuda-events")) {
            throw new ProfileFormatException(source + ": method '" + method + "', expected 'cuda-events'");
        }
        return new EventsOverlap(string(root, "block", source), (int) number(root, "batches", source),
                (long) number(root, "upload_bytes", source), run(root, "pipelined", source), run(root, "serial", source));
    }

    /** The JSON the normalizer writes under {@code overlap_events}. */
    Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("method", "cuda-events");
        m.put("block", block);
        m.put("batches", batches);
        m.put("upload_bytes", uploadBytes);
        m.put("pipelined", pipelined.toMap());
        m.put("serial", serial.toMap());
        return m;
    }

    private static Run run(JsonObject root, String key, String source) {
        if (!(root.members().get(key) instanceof JsonObject o)) {
            throw new ProfileFormatException(source + ": no object '" + key + "'");
        }
        String where = source + " " + key;
        double copyUs = number(o, "copy_busy_us", where);
        double computeUs = number(o, "compute_busy_us", where);
        double both = number(o, "overlap_us", where);
        int copies = (int) number(o, "copies", where);
        if (both > Math.min(copyUs, computeUs) + 1e-3) {
            throw new ProfileFormatException(where + ": overlap_us " + both + " exceeds a busy time (" + copyUs + ", " + computeUs + ")");
        }
        Double pct = copies == 0 ? null : copyUs == 0 ? 0.0 : Math.min(100, 100 * both / copyUs);
        return new Run(number(o, "ms_per_batch", where),
                new Overlap.Result((int) number(o, "computes", where), copies, computeUs, copyUs, both, pct));
    }

    private static String string(JsonObject o, String key, String source) {
        if (o.members().get(key) instanceof JsonString s) {
            return s.value();
        }
        throw new ProfileFormatException(source + ": no string '" + key + "'");
    }

    private static double number(JsonObject o, String key, String source) {
        if (o.members().get(key) instanceof JsonNumber n) {
            double d = Double.parseDouble(n.literal());
            if (d >= 0 && Double.isFinite(d)) {
                return d;
            }
            throw new ProfileFormatException(source + ": '" + key + "' is " + n.literal() + ", not a number >= 0");
        }
        throw new ProfileFormatException(source + ": no number '" + key + "'");
    }
}
