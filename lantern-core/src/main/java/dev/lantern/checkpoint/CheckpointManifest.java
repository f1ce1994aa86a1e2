package dev.lantern.checkpoint;

import dev.lantern.util.JsonStrings;
import dev.lantern.weights.JsonParser;
import dev.lantern.weights.JsonValue;
import dev.lantern.weights.JsonValue.JsonArray;
import dev.lantern.weights.JsonValue.JsonNumber;
import dev.lantern.weights.JsonValue.JsonObject;
import dev.lantern.weights.JsonValue.JsonString;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The manifest of one checkpoint, {@code step-N/manifest.json}: the step, the metadata, and each
 * data file's name, size and SHA-256. Written after the data files are on disk and before the
 * commit record, which in turn holds the manifest's own hash: so the commit record pins every
 * byte of the checkpoint.
 *
 * <pre>{@code
 * {"format": "lantern-checkpoint/1", "step": 200, "metadata": {"rng": "..."},
 *  "files": [{"name": "tensors-00000.safetensors", "bytes": 4160, "sha256": "9f86d0..."}]}
 * }</pre>
 */
record CheckpointManifest(long step, Map<String, String> metadata, List<DataFile> files) {
    static final String FORMAT = "lantern-checkpoint/1";

    /** One data file: its name inside the step's folder, its size and its SHA-256 (hex). */
    record DataFile(String name, long bytes, String sha256) {}

    byte[] toJson() {
        StringBuilder b = new StringBuilder("{\"format\": ");
        JsonStrings.quote(b, FORMAT);
        b.append(", \"step\": ").append(step).append(", \"metadata\": {");
        String sep = "";
        for (Map.Entry<String, String> e : new TreeMap<>(metadata).entrySet()) {
            b.append(sep);
            JsonStrings.quote(b, e.getKey());
            b.append(": ");
            JsonStrings.quote(b, e.getValue());
            sep = ", ";
        }
        b.append("}, \"files\": [");
        sep = "";
        for (DataFile f : files) {
            b.append(sep).append("{\"name\": ");
            JsonStrings.quote(b, f.name());
            b.append(", \"bytes\": ").append(f.bytes()).append(", \"sha256\": ");
            JsonStrings.quote(b, f.sha256());
            b.append('}');
            sep = ", ";
        }
        return b.append("]}\n").toString().getBytes(StandardCharsets.UTF_8);
    }

    /** Parses a manifest; anything not of this form is an {@link IllegalArgumentException} with the reason. */
    static CheckpointManifest parse(byte[] json) {
        JsonObject o = object(JsonParser.parse(json, 8), "manifest");
        if (!(o.members().get("format") instanceof JsonString(String format)) || !format.equals(FORMAT)) {
            throw new IllegalArgumentException("not a " + FORMAT + " manifest");
        }
        long step = number(o.members().get("step"), "step");
        Map<String, String> meta = new TreeMap<>();
        for (Map.Entry<String, JsonValue> e : object(o.members().get("metadata"), "metadata").members().entrySet()) {
            if (!(e.getValue() instanceof JsonString(String v))) {
                throw new IllegalArgumentException("metadata '" + e.getKey() + "' is not a string");
            }
            meta.put(e.getKey(), v);
        }
        if (!(o.members().get("files") instanceof JsonArray(List<JsonValue> elements))) {
            throw new IllegalArgumentException("files is not an array");
        }
        List<DataFile> files = new ArrayList<>();
        for (JsonValue v : elements) {
            JsonObject f = object(v, "file entry");
            if (!(f.members().get("name") instanceof JsonString(String name)) || !(f.members().get("sha256") instanceof JsonString(String sha))) {
                throw new IllegalArgumentException("file entry without name or sha256");
            }
            files.add(new DataFile(name, number(f.members().get("bytes"), "bytes"), sha));
        }
        return new CheckpointManifest(step, meta, List.copyOf(files));
    }

    static JsonObject object(JsonValue v, String what) {
        if (v instanceof JsonObject o) {
            return o;
        }
        throw new IllegalArgumentException(what + " is not a JSON object");
    }

    static long number(JsonValue v, String what) {
        if (v instanceof JsonNumber n && n.longValueOrNull() != null && n.longValueOrNull() >= 0) {
            return n.longValueOrNull();
        }
        throw new IllegalArgumentException(what + " is not a non-negative integer");
    }
}
