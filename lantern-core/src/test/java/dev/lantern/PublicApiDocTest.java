package dev.lantern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every public type of the API package ({@code dev.lantern}) and of the options a user passes
 * ({@code CompileOptions}, {@code BackendChoices}) carries a Javadoc comment, and so does every
 * public method of the API package's types.
 */
class PublicApiDocTest {
    static final Path API = Path.of("src/main/java/dev/lantern");
    static final Pattern TYPE = Pattern.compile("(?m)^public (?:final |sealed |abstract )*(?:class|interface|record|enum) (\\w+)");
    static final Pattern METHOD = Pattern.compile("(?m)^    (?:public |static |default )+[\\w<>\\[\\], ?]+ (\\w+)\\(");

    static List<Path> sources() throws IOException {
        List<Path> out = new ArrayList<>();
        try (Stream<Path> s = Files.list(API)) {
            s.filter(p -> p.toString().endsWith(".java")).forEach(out::add);
        }
        out.add(Path.of("src/main/java/dev/lantern/engine/CompileOptions.java"));
        out.add(Path.of("src/main/java/dev/lantern/engine/BackendChoices.java"));
        return out;
    }

    @Test
    void everyPublicTypeHasJavadoc() throws IOException {
        List<String> missing = new ArrayList<>();
        int types = 0;
        for (Path p : sources()) {
            String src = Files.readString(p);
            Matcher m = TYPE.matcher(src);
            while (m.find()) {
                types++;
                String before = src.substring(0, m.start()).stripTrailing();
                if (!before.endsWith("*/")) {
                    missing.add(m.group(1));
                }
            }
        }
        assertTrue(types >= 12, "found only " + types + " public types");
        assertEquals(List.of(), missing, "public types without Javadoc");
    }

    @Test
    void everyPublicMethodOfTheApiPackageHasJavadocOrOverrides() throws IOException {
        List<String> missing = new ArrayList<>();
        for (Path p : sources()) {
            if (!p.getParent().equals(API)) {
                continue;
            }
            String src = Files.readString(p);
            Matcher m = METHOD.matcher(src);
            while (m.find()) {
                String before = src.substring(0, m.start()).stripTrailing();
                if (!before.endsWith("*/") && !before.endsWith("@Override") && !m.group(0).contains(" private ")) {
                    missing.add(p.getFileName() + ": " + m.group(1));
                }
            }
        }
        assertEquals(List.of(), missing, "public methods without Javadoc");
    }
}
