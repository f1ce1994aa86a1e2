package dev.lantern.frontend.hf;

import dev.lantern.ir.LanternException;
import dev.lantern.weights.JsonParser;
import dev.lantern.weights.JsonValue;
import dev.lantern.weights.JsonValue.JsonBoolean;
import dev.lantern.weights.JsonValue.JsonNull;
import dev.lantern.weights.JsonValue.JsonNumber;
import dev.lantern.weights.JsonValue.JsonObject;
import dev.lantern.weights.JsonValue.JsonString;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;

/**
 * The fields of a {@code config.json}, read with their types checked: each getter names the field
 * and the file in the {@link HfModelException} it throws, so a bad config says what to fix.
 * A field written as {@code null} counts as absent (transformers writes {@code "n_inner": null}).
 */
public final class HfConfig {
    public static final String FILE_NAME = "config.json";
    /** config.json files are a few kB; a larger one is not a config. */
    private static final long MAX_BYTES = 1 << 20;

    private final Path file;
    private final Map<String, JsonValue> fields;

    private HfConfig(Path file, Map<String, JsonValue> fields) {
        this.file = file;
        this.fields = fields;
    }

    public static HfConfig read(Path folder) {
        Path file = folder.resolve(FILE_NAME);
        byte[] bytes;
        try {
            if (Files.size(file) > MAX_BYTES) {
                throw new HfModelException(FILE_NAME, file + ": over " + MAX_BYTES + " bytes, not a model config");
            }
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new HfModelException(FILE_NAME, folder + ": no " + FILE_NAME + " (a Hugging Face model folder has one)", e);
        } catch (IOException e) {
            throw new HfModelException(FILE_NAME, file + ": cannot read: " + e.getMessage(), e);
        }
        JsonValue root;
        try {
            root = JsonParser.parse(bytes, 64);
        } catch (LanternException e) {
            throw new HfModelException(FILE_NAME, file + ": not valid JSON: " + e.getMessage(), e);
        }
        if (!(root instanceof JsonObject o)) {
            throw new HfModelException(FILE_NAME, file + ": expected a JSON object, found " + root.kind());
        }
        return new HfConfig(file, o.members());
    }

    public Path file() {
        return file;
    }

    public boolean has(String field) {
        JsonValue v = fields.get(field);
        return v != null && !(v instanceof JsonNull);
    }

    public String string(String field) {
        return switch (required(field)) {
            case JsonString s -> s.value();
            case JsonValue v -> throw wrong(field, "a string", v);
        };
    }

    public String string(String field, String absent) {
        return has(field) ? string(field) : absent;
    }

    /** A positive integer: every size Lantern reads from a config is one. */
    public int positive(String field) {
        JsonValue v = required(field);
        Long n = v instanceof JsonNumber num ? num.longValueOrNull() : null;
        if (n == null) {
            throw wrong(field, "an integer", v);
        }
        if (n <= 0 || n > Integer.MAX_VALUE) {
            throw new HfModelException(field, file + ": field '" + field + "' is " + n + ", expected an integer in [1, 2^31)");
        }
        return n.intValue();
    }

    public int positive(String field, int absent) {
        return has(field) ? positive(field) : absent;
    }

    /** A finite number, such as an epsilon or RoPE's theta. */
    public double number(String field, double absent) {
        if (!has(field)) {
            return absent;
        }
        JsonValue v = fields.get(field);
        double d;
        try {
            d = v instanceof JsonNumber num ? Double.parseDouble(num.literal()) : Double.NaN;
        } catch (NumberFormatException e) {
            d = Double.NaN;
        }
        if (!Double.isFinite(d)) {
            throw wrong(field, "a finite number", v);
        }
        return d;
    }

    public boolean bool(String field, boolean absent) {
        if (!has(field)) {
            return absent;
        }
        return switch (fields.get(field)) {
            case JsonBoolean b -> b.value();
            case JsonValue v -> throw wrong(field, "true or false", v);
        };
    }

    /** The object in {@code field}, or null when absent. */
    public Map<String, JsonValue> object(String field) {
        if (!has(field)) {
            return null;
        }
        return switch (fields.get(field)) {
            case JsonObject o -> o.members();
            case JsonValue v -> throw wrong(field, "an object", v);
        };
    }

    /** A field whose value Lantern does not build: the error names the field and what it can do. */
    public HfModelException unsupported(String field, String value, String supported) {
        return new HfModelException(field, file + ": field '" + field + "' is " + value + ", Lantern builds " + supported);
    }

    private JsonValue required(String field) {
        if (!has(field)) {
            throw new HfModelException(field, file + ": missing field '" + field + "'");
        }
        return fields.get(field);
    }

    private HfModelException wrong(String field, String expected, JsonValue found) {
        String shown = switch (found) {
            case JsonNumber n -> n.literal();
            case JsonString s -> quote(s.value());
            case JsonBoolean b -> Boolean.toString(b.value());
            default -> found.kind();
        };
        return new HfModelException(field, file + ": field '" + field + "' is " + shown + ", expected " + expected);
    }

    /** A value from the file, quoted and cut short for a one-line message. */
    static String quote(String s) {
        String cut = s.length() > 60 ? s.substring(0, 60) + "..." : s;
        return '"' + cut.replaceAll("\\p{Cntrl}", "?") + '"';
    }
}
