package dev.lantern.weights;

import dev.lantern.weights.SafetensorsException.Kind;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The safetensors weights of a Hugging Face style model folder: one {@code model.safetensors},
 * or shards listed by {@code model.safetensors.index.json} (the index wins when both exist, as in
 * {@code transformers}). Every shard is mapped and validated at {@link #open}, and every tensor the
 * index names is checked to be in its shard, so a model that opens has all its weights. Tensors
 * a shard holds but the index does not name are not exposed.
 */
public final class SafetensorsModel implements AutoCloseable {
    public static final String SINGLE_FILE = "model.safetensors";

    private final Path folder;
    private final List<SafetensorsFile> files;
    private final Map<String, SafetensorsFile> byName;

    private SafetensorsModel(Path folder, List<SafetensorsFile> files, Map<String, SafetensorsFile> byName) {
        this.folder = folder;
        this.files = files;
        this.byName = byName;
    }

    /** Opens the weights in {@code folder}. */
    public static SafetensorsModel open(Path folder) {
        Path index = folder.resolve(SafetensorsIndex.FILE_NAME);
        if (Files.exists(index)) {
            return openSharded(folder, SafetensorsIndex.read(ContainedPath.resolve(folder, SafetensorsIndex.FILE_NAME, "index")));
        }
        if (!Files.exists(folder.resolve(SINGLE_FILE))) {
            throw new SafetensorsException(Kind.IO, folder + ": no " + SINGLE_FILE + " and no " + SafetensorsIndex.FILE_NAME);
        }
        SafetensorsFile f = SafetensorsFile.open(ContainedPath.resolve(folder, SINGLE_FILE, "weights"));
        Map<String, SafetensorsFile> byName = new LinkedHashMap<>();
        for (String name : f.names()) {
            byName.put(name, f);
        }
        return new SafetensorsModel(folder, List.of(f), byName);
    }

    private static SafetensorsModel openSharded(Path folder, SafetensorsIndex index) {
        Map<Path, SafetensorsFile> open = new LinkedHashMap<>();
        try {
            for (Path shard : index.shards()) {
                open.put(shard, SafetensorsFile.open(shard));
            }
            Map<String, SafetensorsFile> byName = new LinkedHashMap<>();
            for (Map.Entry<String, Path> e : index.weightMap().entrySet()) {
                SafetensorsFile f = open.get(e.getValue());
                if (!f.contains(e.getKey())) {
                    throw new SafetensorsException(Kind.MISSING_TENSOR, folder + ": the index puts tensor "
                            + JsonParser.quoteForMessage(e.getKey()) + " in " + e.getValue().getFileName() + ", which has no such tensor");
                }
                byName.put(e.getKey(), f);
            }
            return new SafetensorsModel(folder, List.copyOf(open.values()), byName);
        } catch (RuntimeException e) {
            open.values().forEach(SafetensorsFile::close);
            throw e;
        }
    }

    public Path folder() {
        return folder;
    }

    /** The mapped files, one or the shards in index order. */
    public List<SafetensorsFile> files() {
        return files;
    }

    /** Every tensor name, in index (or file) order. */
    public List<String> names() {
        return Collections.unmodifiableList(new ArrayList<>(byName.keySet()));
    }

    public boolean contains(String name) {
        return byName.containsKey(name);
    }

    /** Tensor {@code name}, a view into its shard's mapping. */
    public TensorView tensor(String name) {
        SafetensorsFile f = byName.get(name);
        if (f == null) {
            throw new SafetensorsException(Kind.MISSING_TENSOR, folder + ": no tensor " + JsonParser.quoteForMessage(name));
        }
        return f.tensor(name);
    }

    @Override
    public void close() {
        files.forEach(SafetensorsFile::close);
    }
}
