package dev.lantern.bench.report;

import dev.lantern.weights.JsonParser;
import dev.lantern.weights.JsonValue;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Reads every file under a results folder into {@link ResultFile}s, in path order. Never throws for
 * a file's content: bad JSON, an unknown shape, a text file that is not UTF-8 or a file too large
 * each become a listed problem. JSON files carry their machine, commit and date; a text file takes
 * the machine that the JSON files of its folder name most often.
 */
public final class ResultsReader {
    /** Larger files are listed, not read: results are a few hundred KB at most. */
    static final long MAX_BYTES = 32L << 20;
    private static final Pattern DATE = Pattern.compile("^(\\d{4}-\\d{2}-\\d{2})");
    private static final Pattern HASH = Pattern.compile("^([0-9a-f]{7,40})\\b");
    private static final Pattern NAME_HASH = Pattern.compile("-([0-9a-f]{7})(?:-|\\.|$)");

    private ResultsReader() {}

    /** Every regular file under {@code dir}, read; an unreadable folder is an {@link UncheckedIOException}. */
    public static List<ResultFile> read(Path dir) {
        List<Path> files;
        try (Stream<Path> s = Files.walk(dir)) {
            files = s.filter(Files::isRegularFile).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + dir + ": " + e.getMessage(), e);
        }
        List<ResultFile> out = new ArrayList<>();
        List<Path> texts = new ArrayList<>();
        for (Path f : files) {
            if (f.getFileName().toString().endsWith(".json")) {
                out.add(readJson(dir, f));
            } else {
                texts.add(f);
            }
        }
        Map<String, Map<String, Integer>> machinesByFolder = new HashMap<>();
        for (ResultFile r : out) {
            if (r.readable()) {
                machinesByFolder.computeIfAbsent(folder(r.path()), k -> new HashMap<>()).merge(r.machine(), 1, Integer::sum);
            }
        }
        for (Path f : texts) {
            String rel = rel(dir, f);
            String machine = machinesByFolder.getOrDefault(folder(rel), Map.of()).entrySet().stream()
                    .max(Map.Entry.comparingByValue()).map(Map.Entry::getKey).orElse(folderName(rel));
            out.add(readText(f, rel, machine));
        }
        out.sort(java.util.Comparator.comparing(ResultFile::path));
        return out;
    }

    private static ResultFile readJson(Path dir, Path f) {
        String rel = rel(dir, f);
        try {
            long size = Files.size(f);
            if (size > MAX_BYTES) {
                return ResultFile.unreadable(rel, folderName(rel), "larger than " + (MAX_BYTES >> 20) + " MiB (" + size + " bytes)");
            }
            JsonValue v = JsonParser.parse(Files.readAllBytes(f), 64);
            Map<String, JsonValue> root = Json.obj(v);
            if (root.isEmpty()) {
                return ResultFile.unreadable(rel, folderName(rel), "not a JSON object (" + v.kind() + ")");
            }
            ResultShapes.Parsed p = ResultShapes.parse(root);
            if (p == null) {
                return ResultFile.unreadable(rel, folderName(rel), "no figures in a known shape (keys: "
                        + String.join(", ", root.keySet().stream().limit(12).toList()) + ")");
            }
            return new ResultFile(rel, p.kind(), machine(root, rel), commit(root, rel), date(root, rel), p.figures(), p.kernels(),
                    p.timeline(), null, null);
        } catch (IOException e) {
            return ResultFile.unreadable(rel, folderName(rel), "cannot read: " + e.getMessage());
        } catch (RuntimeException e) {
            // JsonException and any surprise in a shape: the report goes on without this file
            return ResultFile.unreadable(rel, folderName(rel), e.getClass().getSimpleName() + ": " + oneLine(e.getMessage()));
        }
    }

    private static ResultFile readText(Path f, String rel, String machine) {
        try {
            if (Files.size(f) > MAX_BYTES) {
                return ResultFile.unreadable(rel, machine, "larger than " + (MAX_BYTES >> 20) + " MiB");
            }
            String text = StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(Files.readAllBytes(f))).toString();
            return new ResultFile(rel, "text", machine, commit(Map.of(), rel), date(Map.of(), rel), List.of(), List.of(), List.of(), null, text);
        } catch (CharacterCodingException e) {
            return ResultFile.unreadable(rel, machine, "not UTF-8 text");
        } catch (IOException e) {
            return ResultFile.unreadable(rel, machine, "cannot read: " + e.getMessage());
        }
    }

    /** "NVIDIA H200" from "gpu", "AMD EPYC (2 cores)" from "machine", else the folder's name. */
    static String machine(Map<String, JsonValue> root, String rel) {
        String gpu = Json.str(root, "gpu");
        if (gpu != null && !gpu.isBlank()) {
            return gpu.split(",")[0].trim();
        }
        Map<String, JsonValue> m = Json.obj(root.get("machine"));
        String cpu = Json.str(m, "cpu");
        if (cpu != null) {
            String cores = Json.str(m, "cores");
            return cpu + (cores == null ? "" : " (" + cores + " cores)");
        }
        return folderName(rel);
    }

    static String commit(Map<String, JsonValue> root, String rel) {
        String c = Json.str(root, "commit");
        if (c != null) {
            Matcher m = HASH.matcher(c.trim());
            if (m.find()) {
                return m.group(1).substring(0, Math.min(7, m.group(1).length()));
            }
        }
        Matcher n = NAME_HASH.matcher(rel.substring(rel.lastIndexOf('/') + 1));
        return n.find() ? n.group(1) : "?";
    }

    static String date(Map<String, JsonValue> root, String rel) {
        String d = Json.str(root, "date");
        if (d != null) {
            Matcher m = DATE.matcher(d);
            if (m.find()) {
                return m.group(1);
            }
        }
        Matcher n = DATE.matcher(rel.substring(rel.lastIndexOf('/') + 1));
        return n.find() ? n.group(1) : "";
    }

    private static String rel(Path dir, Path f) {
        return dir.relativize(f).toString().replace('\\', '/');
    }

    private static String folder(String rel) {
        int i = rel.lastIndexOf('/');
        return i < 0 ? "" : rel.substring(0, i);
    }

    private static String folderName(String rel) {
        String f = folder(rel);
        return f.isEmpty() ? "results" : f.substring(f.lastIndexOf('/') + 1);
    }

    private static String oneLine(String s) {
        return s == null ? "(no message)" : s.replace('\n', ' ').replace('\r', ' ');
    }
}
