package dev.lantern.checkpoint;

import dev.lantern.util.JsonStrings;
import dev.lantern.weights.JsonParser;
import dev.lantern.weights.JsonValue.JsonObject;
import dev.lantern.weights.JsonValue.JsonString;

import java.nio.charset.StandardCharsets;

/**
 * The commit record of one checkpoint, {@code commit-N.json} in the store's folder: the last thing
 * a write puts in place (by an atomic rename), and the only thing that makes a checkpoint visible.
 * It pins the manifest by size and SHA-256, and the manifest pins every data file; the records,
 * in step order, are the store's write-ahead log.
 *
 * <pre>{@code
 * {"format": "lantern-checkpoint-commit/1", "step": 200, "manifest_bytes": 212, "manifest_sha256": "2c26b4..."}
 * }</pre>
 */
record CommitRecord(long step, long manifestBytes, String manifestSha256) {
    static final String FORMAT = "lantern-checkpoint-commit/1";

    byte[] toJson() {
        StringBuilder b = new StringBuilder("{\"format\": ");
        JsonStrings.quote(b, FORMAT);
        b.append(", \"step\": ").append(step).append(", \"manifest_bytes\": ").append(manifestBytes).append(", \"manifest_sha256\": ");
        JsonStrings.quote(b, manifestSha256);
        return b.append("}\n").toString().getBytes(StandardCharsets.UTF_8);
    }

    /** Parses a record; anything not of this form is an {@link IllegalArgumentException} with the reason. */
    static CommitRecord parse(byte[] json) {
        JsonObject o = CheckpointManifest.object(JsonParser.parse(json, 4), "commit record");
        if (!(o.members().get("format") instanceof JsonString(String format)) || !format.equals(FORMAT)) {
            throw new IllegalArgumentException("not a " + FORMAT + " record");
        }
        if (!(o.members().get("manifest_sha256") instanceof JsonString(String sha))) {
            throw new IllegalArgumentException("no manifest_sha256");
        }
        return new CommitRecord(CheckpointManifest.number(o.members().get("step"), "step"),
                CheckpointManifest.number(o.members().get("manifest_bytes"), "manifest_bytes"), sha);
    }
}
