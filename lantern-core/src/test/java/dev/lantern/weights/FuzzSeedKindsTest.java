package dev.lantern.weights;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The regression seeds taken from the fuzzer's corpus are named for what the reader answered when
 * they were picked ({@code corpus-<kind>-framed|raw}, or {@code corpus-ok-*} for a file that opens):
 * the fuzz target only checks that nothing untyped escapes, this checks the answers stay the same.
 */
class FuzzSeedKindsTest {
    @Test
    void everyCorpusSeedGetsTheAnswerItIsNamedFor() throws IOException, URISyntaxException {
        Path dir = Path.of(getClass().getResource("SafetensorsFuzzTestInputs/fuzzReader").toURI());
        List<Path> seeds;
        try (Stream<Path> s = Files.list(dir)) {
            seeds = s.filter(p -> p.getFileName().toString().startsWith("corpus-")).sorted().toList();
        }
        assertTrue(seeds.size() >= 20, "found " + seeds.size() + " corpus seeds");
        for (Path p : seeds) {
            String name = p.getFileName().toString().substring("corpus-".length());
            byte[] file = SafetensorsFuzzTest.frame(Files.readAllBytes(p));
            if (name.startsWith("ok-")) {
                SafetensorsFile f = SafetensorsFile.of(MemorySegment.ofArray(file), name);
                assertTrue(f.tensors().size() >= 1, name);
            } else {
                String kind = name.substring(0, name.lastIndexOf('-')).replace('-', '_').toUpperCase(Locale.ROOT);
                SafetensorsException e = assertThrows(SafetensorsException.class,
                        () -> SafetensorsFile.of(MemorySegment.ofArray(file), name), name);
                assertEquals(SafetensorsException.Kind.valueOf(kind), e.kind(), name + ": " + e.getMessage());
            }
        }
    }
}
