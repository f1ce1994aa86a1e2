package dev.lantern.cli;

import dev.lantern.Device;
import dev.lantern.DeviceUnavailableException;
import dev.lantern.Lantern;
import dev.lantern.Program;
import dev.lantern.RunMode;
import dev.lantern.Session;
import dev.lantern.Weights;
import dev.lantern.WeightsException;
import dev.lantern.engine.CompileOptions;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.LanternException;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Npy;
import dev.lantern.tensor.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import dev.lantern.Bindings;
import dev.lantern.reference.ReferenceInterpreter;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The example of docs/api.md, compiled and run: {@link #example()}'s body is the page's second
 * code block and the imports above the blank line are its first, byte for byte
 * ({@link #theDocumentationShowsThisCode}), so the page cannot drift from code that works.
 */
class ApiExampleTest {
    static final Path SOURCE = Path.of("src/test/java/dev/lantern/cli/ApiExampleTest.java");
    static final Path DOC = Path.of("../docs/api.md");

    static Tensor example() throws IOException {
        // 1. A graph, in the IR text format (from a file: IrParser.parse(Files.readString(path)))
        Graph graph = IrParser.parse("""
                graph @classifier {
                  %x = input {name="x"} : f32[4,16]
                  %w = param {name="fc.weight"} : f32[16,10]
                  %b = param {name="fc.bias"} : f32[10]
                  %h = matmul(%x, %w) : f32[4,10]
                  %hb = add(%h, %b) : f32[4,10]
                  %p = softmax(%hb) : f32[4,10]
                  return %p
                }
                """);

        // 2. Compile once: the passes run here, and a bad graph fails here
        Program program = Lantern.compile(graph, CompileOptions.defaults());
        System.out.println(program.inputNames() + " -> " + program.outputNames()); // [x] -> [p]

        // 3. Parameters by name: seeded random values, a map (Weights.of) or safetensors
        Weights weights = Weights.random(42);

        // 4. Inputs by name: host tensors of the declared shape
        Tensor x = Tensor.allocate(DType.F32, Shape.of(4, 16));
        for (int i = 0; i < x.numel(); i++) {
            x.set(i, (float) Math.sin(i));
        }

        // 5. Load on a device, run, close: cuda:0 when a GPU is usable, else the cpu
        Device device = Lantern.bestDevice();
        Tensor probs;
        try (Session session = program.load(device, weights, RunMode.COMPILED)) {
            probs = session.run(Map.of("x", x)).get("p");
            System.out.println(probs.shape() + " " + probs.dtype()); // [4,10] f32
        }

        // 6. Modes: EAGER (one kernel per op), COMPILED (fused), GRAPH (a CUDA graph replayed)
        for (RunMode mode : RunMode.values()) {
            try (Session session = program.load(Device.parse("cpu"), weights, mode)) {
                session.run(Map.of("x", x));
                System.out.println(mode + ": " + session.stats());
            }
        }

        // 7. Options: bf16 GEMMs with f32 accumulation, norms and softmax in f32
        Program amp = Lantern.compile(graph, CompileOptions.defaults().withAmp(CompileOptions.Amp.BF16));
        try (Session session = amp.load(Device.cpu(), weights)) {
            System.out.println("bf16: " + session.run(amp.randomInputs(7)).get("p").shape());
        }

        // 8. Every failure is a typed LanternException with a one-line message
        try {
            program.load(Device.parse("cuda:99"), weights);
        } catch (DeviceUnavailableException e) {
            System.out.println(e.getMessage()); // device cuda:99 is not available: ...
        }
        try {
            program.load(Device.cpu(), Weights.of(Map.of()));
        } catch (WeightsException e) {
            System.out.println(e.getMessage()); // no value for parameter 'fc.weight' (f32[16,10])
        }
        try (Session session = program.load(Device.cpu(), weights)) {
            session.run(Map.of("x", Tensor.allocate(DType.F32, Shape.of(4, 15))));
        } catch (LanternException e) {
            System.out.println(e.getMessage()); // input 'x': the graph declares f32[4,16], given f32[4,15]
        }

        // 9. Tensors to and from NumPy's .npy files
        Path file = Files.createTempFile("probs", ".npy");
        Npy.write(file, probs);
        Tensor back = Npy.read(file);
        Files.delete(file);
        return back;
    }

    @Test
    void theExampleRunsAndMatchesTheFloat64Reference() throws IOException {
        Tensor probs = example();
        // the example's graph, read from its source: the test checks the example, not a copy of it
        String src = Files.readString(SOURCE);
        Graph g = IrParser.parse(src.substring(src.indexOf("graph @classifier"), src.indexOf("\"\"\");")));
        Tensor x = Tensor.allocate(DType.F32, Shape.of(4, 16));
        for (int i = 0; i < x.numel(); i++) {
            x.set(i, (float) Math.sin(i));
        }
        Map<String, Tensor> all = new HashMap<>(Bindings.parameters(g, Weights.random(42)));
        all.put("x", x);
        double[] ref = ReferenceInterpreter.run(g, all).get("p").data();
        double[] got = probs.toDoubles();
        assertEquals(ref.length, got.length);
        for (int i = 0; i < ref.length; i++) {
            assertEquals(ref[i], got[i], 1e-6, "p[" + i + "]");
        }
    }

    @Test
    void theDocumentationShowsThisCode() throws IOException {
        List<String> src = Files.readAllLines(SOURCE);
        List<String> blocks = javaBlocks(Files.readString(DOC));
        assertEquals(2, blocks.size(), "docs/api.md has two java blocks: the imports and the example");
        // the imports the example needs: the first group, up to the blank line
        StringBuilder imports = new StringBuilder();
        for (String l : src.subList(2, src.size())) {
            if (l.isEmpty()) {
                break;
            }
            imports.append(l).append('\n');
        }
        assertEquals(imports.toString(), blocks.get(0), "docs/api.md's imports differ from ApiExampleTest's");
        int start = src.indexOf("    static Tensor example() throws IOException {") + 1;
        int end = src.subList(start, src.size()).indexOf("    }") + start;
        assertTrue(start > 0 && end > start, "example() not found in " + SOURCE);
        StringBuilder body = new StringBuilder();
        for (String l : src.subList(start, end)) {
            body.append(l.length() >= 8 ? l.substring(8) : l.strip()).append('\n');
        }
        assertEquals(body.toString(), blocks.get(1), "docs/api.md's example differs from ApiExampleTest.example()");
    }

    /** The text of every ```java block. */
    static List<String> javaBlocks(String markdown) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = null;
        for (String l : markdown.lines().toList()) {
            if (cur == null && l.equals("```java")) {
                cur = new StringBuilder();
            } else if (cur != null && l.equals("```")) {
                out.add(cur.toString());
                cur = null;
            } else if (cur != null) {
                cur.append(l).append('\n');
            }
        }
        return out;
    }
}
