package dev.lantern.ir;

import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** print(parse(t)) == t for the golden .ir files and for every benchmark block the builder makes. */
class RoundTripTest {
    static Stream<Path> goldenFiles() throws IOException, URISyntaxException {
        Path dir = Path.of(RoundTripTest.class.getResource("/ir").toURI());
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.toString().endsWith(".ir")).sorted().toList().stream();
        }
    }

    @ParameterizedTest
    @MethodSource("goldenFiles")
    void goldenFilePrintsBackByteForByte(Path file) throws IOException {
        String text = Files.readString(file);
        Graph g = Verifier.verify(IrParser.parse(text));
        assertEquals(text, IrPrinter.print(g));
    }

    static List<String> configs() {
        return BlockConfig.ALL.stream().map(BlockConfig::name).toList();
    }

    @ParameterizedTest
    @MethodSource("configs")
    void builderBlocksRoundTrip(String config) {
        for (DType dt : List.of(DType.F32, DType.BF16)) {
            Graph g = Verifier.verify(TransformerBlock.build(BlockConfig.named(config), dt).graph());
            String text = IrPrinter.print(g);
            Graph back = IrParser.parse(text);
            assertEquals(g, back);
            assertEquals(text, IrPrinter.print(back));
        }
    }
}
