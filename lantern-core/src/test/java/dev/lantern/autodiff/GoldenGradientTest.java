package dev.lantern.autodiff;

import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.IrPrinter;
import dev.lantern.ir.Verifier;
import dev.lantern.passes.Pass;
import dev.lantern.passes.Passes;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Golden IR of backward graphs: {@code autodiff-golden/<case>.ir} (a forward graph whose one output
 * is the loss) differentiated with respect to every param must print exactly
 * {@code <case>.grad.expected.ir}, and after canonicalize, layout-normalize and fuse exactly
 * {@code <case>.fused.expected.ir} (the backward fuses like a forward). Both verify and parse back.
 * {@code -Dgolden.update=true} rewrites the expected files (read the diff before committing).
 */
class GoldenGradientTest {
    static Stream<Path> cases() throws IOException, URISyntaxException {
        Path root = Path.of(GoldenGradientTest.class.getResource("/autodiff-golden").toURI());
        try (Stream<Path> s = Files.list(root)) {
            return s.filter(p -> p.toString().endsWith(".ir") && !p.toString().endsWith(".expected.ir")).sorted().toList().stream();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void backwardMatchesGolden(Path input) throws IOException {
        Graph forward = Verifier.verify(IrParser.parse(Files.readString(input, StandardCharsets.UTF_8)), "golden input");
        Graph grad = Verifier.verify(Gradients.ofParams(forward, forward.outputs().getFirst()).graph(), "gradients");
        compare(input, "grad", grad);
        Graph fused = grad;
        for (String pass : List.of("canonicalize", "layout-normalize", "fuse")) {
            Pass p = Passes.byName(pass);
            fused = Verifier.verify(p.run(fused), "after " + pass);
        }
        compare(input, "fused", fused);
    }

    private static void compare(Path input, String kind, Graph g) throws IOException {
        String actual = IrPrinter.print(g);
        Path expected = Path.of(input.toString().replace(".ir", "." + kind + ".expected.ir"));
        if (Boolean.getBoolean("golden.update")) {
            Files.writeString(Path.of("src/test/resources/autodiff-golden", expected.getFileName().toString()), actual, StandardCharsets.UTF_8);
        }
        assertTrue(Files.exists(expected), "missing golden file " + expected + " (run with -Dgolden.update=true)");
        assertEquals(Files.readString(expected, StandardCharsets.UTF_8), actual, kind + " of " + input.getFileName());
        assertEquals(g, IrParser.parse(actual), "the expected file must parse back to the result");
    }
}
