package dev.lantern.train;

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
 * The training library ({@code dev.lantern.train} and its subpackages) is public API for the CLI
 * and for users: every public type, and every public method or constructor of one, carries a
 * Javadoc comment (or overrides a documented one). PublicApiDocTest's rule, over this package.
 */
class TrainApiDocTest {
    static final Path ROOT = Path.of("src/main/java/dev/lantern/train");
    static final Pattern TYPE = Pattern.compile("(?m)^public (?:final |sealed |abstract )*(?:class|interface|record|enum) (\\w+)");
    static final Pattern MEMBER = Pattern.compile("(?m)^    (?:public |static |default )+(?:[\\w<>\\[\\], ?.]+ )?(\\w+)\\(");

    @Test
    void everyPublicTypeAndMemberHasJavadoc() throws IOException {
        List<Path> sources;
        try (Stream<Path> s = Files.walk(ROOT)) {
            sources = s.filter(p -> p.toString().endsWith(".java")).toList();
        }
        assertTrue(sources.size() >= 20, "found only " + sources.size() + " sources");
        List<String> missing = new ArrayList<>();
        for (Path p : sources) {
            String src = Files.readString(p);
            for (Pattern pat : new Pattern[] {TYPE, MEMBER}) {
                Matcher m = pat.matcher(src);
                while (m.find()) {
                    String before = src.substring(0, m.start()).stripTrailing();
                    if (!before.endsWith("*/") && !before.endsWith("@Override") && !before.endsWith("@FunctionalInterface")) {
                        missing.add(p.getFileName() + ": " + m.group(1));
                    }
                }
            }
        }
        assertEquals(List.of(), missing, "public types and members without Javadoc");
    }
}
