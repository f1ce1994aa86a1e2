package dev.lantern.cuda.engine;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.TreeMap;

/**
 * The autotuner's choices on disk: one line per tuned thing, {@code key=choice}, where the key
 * is the kernel cache key of a generated kernel (its source hash under the default tiles, with
 * the GPU's name) or a cuBLASLt GEMM's spec with the GPU's name, and the choice a tile tag or a
 * heuristic candidate index. Written to a temporary file and renamed into place, so a reader
 * never sees half a file. Location: {@code LANTERN_TUNE_CACHE}, else
 * {@code ~/.cache/lantern/tune.properties}.
 */
public final class TuneCache {
    public static final String ENV = "LANTERN_TUNE_CACHE";
    private final Path file;
    private final TreeMap<String, String> entries = new TreeMap<>();

    public TuneCache(Path file) {
        this.file = file;
        if (file != null && Files.isRegularFile(file)) {
            try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                java.util.Properties p = new java.util.Properties();
                p.load(r);
                p.forEach((k, v) -> entries.put(k.toString(), v.toString()));
            } catch (IOException | IllegalArgumentException e) {
                entries.clear(); // a damaged cache only costs a re-tune
            }
        }
    }

    public static Path defaultFile() {
        String env = System.getenv(ENV);
        if (env != null && !env.isBlank()) {
            return Path.of(env);
        }
        return Path.of(System.getProperty("user.home"), ".cache", "lantern", "tune.properties");
    }

    /** An in-memory cache that is never written (tests). */
    public static TuneCache none() {
        return new TuneCache(null);
    }

    public synchronized String get(String key) {
        return entries.get(key);
    }

    public synchronized void put(String key, String choice) {
        entries.put(key, choice);
    }

    public synchronized Map<String, String> entries() {
        return Map.copyOf(entries);
    }

    public synchronized void save() {
        if (file == null) {
            return;
        }
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            Path tmp = Files.createTempFile(file.toAbsolutePath().getParent(), "tune", ".tmp");
            java.util.Properties p = new java.util.Properties();
            p.putAll(entries);
            try (Writer w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
                p.store(w, "lantern autotune choices");
            }
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the tune cache " + file, e);
        }
    }
}
