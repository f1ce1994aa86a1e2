package dev.lantern.cli;

import dev.lantern.sign.VerificationException;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A compiled model package's {@code package.properties} ({@link ModelPackager}): the format, the
 * device and architecture it was compiled for, the packaged model entry, the compile options that
 * rebuild it, the plan's SHA-256 and how its cubins were built. One {@code key=value} a line, in a
 * fixed order, so the same compile writes the same bytes.
 *
 * @param device  {@code cpu} or {@code cuda}
 * @param arch    the CPU's {@code os.arch} for cpu, the SM architecture ({@code sm_90}) for cuda
 * @param model   the entry holding the model as given (an IR file or an ONNX model)
 * @param options the compile options besides the model and device ({@code --amp}, ONNX shapes)
 * @param planSha256 SHA-256 of the optimised IR, kernel list and memory plan entries together
 * @param cubins  how the cubins were built, or why there are none
 */
record PackageInfo(String device, String arch, String model, List<String> options, String planSha256, String cubins) {
    static final String ENTRY = "package.properties";
    static final String FORMAT = "lantern-package/1";

    PackageInfo {
        options = List.copyOf(options);
        for (String o : options) {
            if (o.isEmpty() || o.chars().anyMatch(Character::isWhitespace)) {
                throw new UsageException("compile --package: option '" + o + "' holds a space, which a package cannot record");
            }
        }
    }

    byte[] bytes() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("format", FORMAT);
        m.put("device", device);
        m.put("arch", arch);
        m.put("model", model);
        m.put("options", String.join(" ", options));
        m.put("plan.sha256", planSha256);
        m.put("cubins", cubins);
        StringBuilder b = new StringBuilder();
        m.forEach((k, v) -> b.append(k).append('=').append(v.replace('\n', ' ')).append('\n'));
        return b.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** The record from its entry's bytes; a {@link VerificationException} naming the entry when it is not one. */
    static PackageInfo parse(byte[] bytes) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String line : new String(bytes, StandardCharsets.UTF_8).split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                m.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        if (!FORMAT.equals(m.get("format"))) {
            throw new VerificationException(ENTRY, "format '" + m.get("format") + "' is not " + FORMAT + " (a newer Lantern's package?)");
        }
        for (String k : List.of("device", "arch", "model", "options", "plan.sha256", "cubins")) {
            if (m.get(k) == null) {
                throw new VerificationException(ENTRY, "has no " + k);
            }
        }
        List<String> options = m.get("options").isBlank() ? List.of() : new ArrayList<>(Arrays.asList(m.get("options").split(" ")));
        return new PackageInfo(m.get("device"), m.get("arch"), m.get("model"), options, m.get("plan.sha256"), m.get("cubins"));
    }

    /** One line for messages: {@code cuda sm_90} or {@code cpu amd64}. */
    String target() {
        return device + " " + arch;
    }
}
