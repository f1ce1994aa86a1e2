package dev.lantern.passes;

import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.IrPrinter;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Verifier;
import dev.lantern.reference.RefTensor;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The one runner of every golden pass test: {@code golden/<pass>/<case>.ir} is run through the pass
 * of that name (verified before and after) and must print exactly {@code <case>.expected.ir}. The
 * result must also compute what the input computes: both graphs run on the float64 reference with
 * the same fresh seeded inputs. Lines of a dump that depend on the machine (tile/vector width and
 * kernel keys, which carry the CPU's architecture) are left out of the comparison.
 * {@code -Dgolden.update=true} rewrites the expected files (read the diff before committing).
 */
class GoldenPassTest {
    static Stream<Path> cases() throws IOException, URISyntaxException {
        Path root = Path.of(GoldenPassTest.class.getResource("/golden").toURI());
        List<Path> all = new ArrayList<>();
        try (Stream<Path> s = Files.walk(root)) {
            s.filter(p -> p.toString().endsWith(".ir") && !p.toString().endsWith(".expected.ir")).sorted().forEach(all::add);
        }
        return all.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void passMatchesGolden(Path input) throws IOException {
        String pass = input.getParent().getFileName().toString();
        Graph before = Verifier.verify(IrParser.parse(Files.readString(input, StandardCharsets.UTF_8)), "golden input");
        Pass p = Passes.byName(pass);
        Graph after = Verifier.verify(p.run(before), "after " + pass);
        String actual = IrPrinter.print(after) + machineIndependent(p.dump(after));
        Path expected = Path.of(input.toString().replace(".ir", ".expected.ir"));
        if (Boolean.getBoolean("golden.update")) {
            Path src = Path.of("src/test/resources/golden", pass, expected.getFileName().toString());
            Files.writeString(src, actual, StandardCharsets.UTF_8);
        }
        assertTrue(Files.exists(expected), "missing golden file " + expected + " (run with -Dgolden.update=true)");
        assertEquals(Files.readString(expected, StandardCharsets.UTF_8), actual, "pass " + pass + " on " + input.getFileName());
        assertEquals(after, IrParser.parse(actual), "the expected file must parse back to the result");
        sameNumbers(before, after, pass.startsWith("autocast") ? 2e-2 : 1e-6);
    }

    /** The dump as '#' lines, without lines that name the machine (tiles, vector width, cache keys). */
    static String machineIndependent(String dump) {
        StringBuilder b = new StringBuilder();
        for (String line : dump.split("\n")) {
            String t = line.strip();
            if (!line.isEmpty() && !t.startsWith("key ") && !t.startsWith("tile ")) {
                b.append(line).append('\n');
            }
        }
        return b.isEmpty() ? "" : commentLines(b.toString());
    }

    private static String commentLines(String s) {
        StringBuilder b = new StringBuilder();
        for (String line : s.split("\n")) {
            b.append(line.startsWith("#") ? line : "# " + line).append('\n');
        }
        return b.toString();
    }

    /** Both graphs on the float64 reference, same inputs and parameters (seed 7): outputs within {@code tol}. */
    static void sameNumbers(Graph before, Graph after, double tol) {
        Map<String, Tensor> sources = new HashMap<>();
        for (Graph g : List.of(before, after)) {
            for (Node n : g.nodes()) {
                if (n.op() == Op.INPUT || n.op() == Op.PARAM) {
                    String name = n.attrs().getString("name", n.name());
                    sources.computeIfAbsent(name, k -> {
                        Tensor t = Tensor.allocate(n.type().dtype(), n.type().shape());
                        long key = Philox.key(7, k);
                        for (long i = 0; i < t.numel(); i++) {
                            t.set(i, Philox.normal(key, i));
                        }
                        return t;
                    });
                }
            }
        }
        Map<String, RefTensor> a = ReferenceInterpreter.run(before, sources);
        Map<String, RefTensor> b = ReferenceInterpreter.run(after, sources);
        for (int i = 0; i < before.outputs().size(); i++) {
            double[] x = a.get(before.outputs().get(i)).data();
            double[] y = b.get(after.outputs().get(i)).data();
            double num = 0;
            double den = 0;
            for (int j = 0; j < x.length; j++) {
                num += (x[j] - y[j]) * (x[j] - y[j]);
                den += x[j] * x[j];
            }
            double rel = Math.sqrt(num / Math.max(den, 1e-300));
            assertTrue(rel <= tol, "output " + i + " changed by the pass: relative error " + rel + " > " + tol);
        }
    }
}
