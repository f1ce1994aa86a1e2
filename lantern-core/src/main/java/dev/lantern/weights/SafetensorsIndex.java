package dev.lantern.weights;

import dev.lantern.weights.JsonValue.JsonNumber;
import dev.lantern.weights.JsonValue.JsonObject;
import dev.lantern.weights.JsonValue.JsonString;
import dev.lantern.weights.SafetensorsException.Kind;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A sharded model's index, {@code model.safetensors.index.json}:
 * {@code {"metadata": {"total_size": 123}, "weight_map": {"tensor name": "model-00001-of-00002.safetensors", ...}}}.
 * Each shard path is resolved inside the index's folder by {@link ContainedPath} ({@code ..},
 * absolute paths and links leading out are refused before any shard is opened). Top-level keys
 * other than these two are ignored; {@code metadata} may hold anything, only {@code total_size}
 * is read.
 *
 * @param folder      the folder holding the index
 * @param weightMap   tensor name to shard file, in index order
 * @param shards      the distinct shard files, in order of first mention
 * @param totalSize   {@code metadata.total_size}, or -1 when absent
 */
public record SafetensorsIndex(Path folder, Map<String, Path> weightMap, List<Path> shards, long totalSize) {
    public static final String FILE_NAME = "model.safetensors.index.json";
    /** An index lists names and file names: far below the header limit even for the largest models. */
    static final long MAX_INDEX_BYTES = SafetensorsHeader.MAX_HEADER_BYTES;
    private static final int MAX_JSON_DEPTH = 16;

    public SafetensorsIndex {
        weightMap = Collections.unmodifiableMap(new LinkedHashMap<>(weightMap));
        shards = List.copyOf(shards);
    }

    /** Reads and checks the index file {@code indexFile}. */
    public static SafetensorsIndex read(Path indexFile) {
        String source = indexFile.toString();
        byte[] bytes;
        try {
            long size = Files.size(indexFile);
            if (size > MAX_INDEX_BYTES) {
                throw new SafetensorsException(Kind.BAD_INDEX, source + ": index is " + size + " bytes, over the limit of "
                        + MAX_INDEX_BYTES);
            }
            bytes = Files.readAllBytes(indexFile);
        } catch (IOException e) {
            throw new SafetensorsException(Kind.IO, source + ": cannot read: " + e, e);
        }
        Path folder = indexFile.toAbsolutePath().getParent();
        return parse(bytes, folder, source);
    }

    /** Checks index bytes whose shards live in {@code folder}. */
    static SafetensorsIndex parse(byte[] bytes, Path folder, String source) {
        JsonValue root;
        try {
            root = JsonParser.parse(bytes, MAX_JSON_DEPTH);
        } catch (JsonException e) {
            throw new SafetensorsException(e.duplicateKey() != null ? Kind.DUPLICATE_NAME : Kind.BAD_INDEX,
                    source + ": index is not valid JSON: " + e.getMessage());
        }
        if (!(root instanceof JsonObject obj)) {
            throw new SafetensorsException(Kind.BAD_INDEX, source + ": index is a JSON " + root.kind() + ", not an object");
        }
        long totalSize = -1;
        if (obj.members().get("metadata") instanceof JsonObject meta && meta.members().get("total_size") instanceof JsonNumber n) {
            Long v = n.longValueOrNull();
            if (v == null || v < 0) {
                throw new SafetensorsException(Kind.BAD_INDEX, source + ": metadata.total_size " + n.literal()
                        + " is not a non-negative integer");
            }
            totalSize = v;
        }
        if (!(obj.members().get("weight_map") instanceof JsonObject map)) {
            throw new SafetensorsException(Kind.BAD_INDEX, source + ": index has no weight_map object");
        }
        Map<String, Path> weightMap = new LinkedHashMap<>();
        Map<String, Path> resolved = new LinkedHashMap<>();
        Set<Path> shards = new LinkedHashSet<>();
        for (Map.Entry<String, JsonValue> e : map.members().entrySet()) {
            if (!(e.getValue() instanceof JsonString file)) {
                throw new SafetensorsException(Kind.BAD_INDEX, source + ": weight_map entry "
                        + JsonParser.quoteForMessage(e.getKey()) + " is a JSON " + e.getValue().kind() + ", not a file name");
            }
            Path shard = resolved.computeIfAbsent(file.value(), f -> ContainedPath.resolve(folder, f, "shard"));
            weightMap.put(e.getKey(), shard);
            shards.add(shard);
        }
        return new SafetensorsIndex(folder, weightMap, new ArrayList<>(shards), totalSize);
    }
}
