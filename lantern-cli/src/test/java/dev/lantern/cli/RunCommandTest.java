package dev.lantern.cli;

import dev.lantern.Bindings;
import dev.lantern.Lantern;
import dev.lantern.Program;
import dev.lantern.Weights;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Npy;
import dev.lantern.tensor.Tensor;
import dev.lantern.weights.SafetensorsDType;
import dev.lantern.weights.SafetensorsWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code lantern run} on examples/mlp-softmax.ir (not a transformer block) on the CPU, in process
 * through {@link Main}: the .npy it writes against the float64 reference on the same seeded
 * weights and inputs, inputs and weights from files, every mode, and every bad input as one line.
 */
class RunCommandTest {
    @TempDir
    Path dir;

    static Graph mlp() {
        return IrParser.parse(Examples.text("mlp-softmax.ir"));
    }

    /** The float64 reference's output {@code p} for {@code w} and {@code in}. */
    static double[] reference(Graph g, Weights w, Map<String, Tensor> in) {
        Map<String, Tensor> all = new HashMap<>(Bindings.parameters(g, w));
        all.putAll(in);
        return ReferenceInterpreter.run(g, all).get("p").data();
    }

    static double relErr(double[] a, double[] b) {
        assertEquals(b.length, a.length);
        double num = 0;
        double den = 0;
        for (int i = 0; i < a.length; i++) {
            num += (a[i] - b[i]) * (a[i] - b[i]);
            den += b[i] * b[i];
        }
        return Math.sqrt(num / den);
    }

    @Test
    void theOutputFileMatchesTheFloat64Reference() throws IOException {
        Path ir = Examples.file(dir, "mlp-softmax.ir");
        Path out = dir.resolve("out/nested"); // created with its parents
        MainTest.Run r = MainTest.run("run", ir.toString(), "--device", "cpu", "--seed", "5", "--runs", "2", "--out", out.toString());
        assertEquals(0, r.code(), r.err());
        Tensor p = Npy.read(out.resolve("p.npy"));
        assertEquals("[3, 37, 50]", Arrays.toString(p.shape().dims()));
        Graph g = mlp();
        Program program = Lantern.compile(g);
        // the documented seeds: weights under --seed, inputs under --seed + 1
        double[] ref = reference(g, Weights.random(5), program.randomInputs(6));
        double e = relErr(p.toDoubles(), ref);
        assertTrue(e < 1e-5, "rel err " + e);
        // the printed line: name, shape, dtype, checksums of exactly what was written
        OutputSummary s = OutputSummary.of("p", p);
        assertTrue(r.out().contains("output    p  [3,37,50]"), r.out());
        assertTrue(r.out().contains("sha256 " + s.sha256()), r.out());
        assertTrue(Math.abs(s.sum() - 111) < 1e-3, "every row of a softmax sums to 1: " + s.sum());
        try (var files = Files.list(out)) {
            assertEquals(List.of("p.npy"), files.map(f -> f.getFileName().toString()).toList(), "no temporary file left");
        }
    }

    @Test
    void inputsAndWeightsFromFiles() {
        Graph g = mlp();
        Program program = Lantern.compile(g);
        Map<String, Tensor> in = program.randomInputs(42);
        Path x = dir.resolve("x.npy");
        Npy.write(x, in.get("x"));
        // f32 weights, one of them stored as bf16 (converted on load)
        Map<String, Tensor> w = Bindings.parameters(g, Weights.random(9));
        SafetensorsWriter sw = new SafetensorsWriter();
        w.forEach((name, t) -> {
            Tensor stored = name.equals("fc1.weight") ? t.cast(dev.lantern.ir.DType.BF16) : t;
            long[] shape = Arrays.stream(t.shape().dims()).asLongStream().toArray();
            sw.add(name, name.equals("fc1.weight") ? SafetensorsDType.BF16 : SafetensorsDType.F32, shape, stored.segment()
                    .asSlice(0, stored.numel() * stored.dtype().bytes()));
            w.put(name, stored.cast(dev.lantern.ir.DType.F32));
        });
        Path wf = dir.resolve("w.safetensors");
        sw.write(wf);
        MainTest.Run r = MainTest.run("run", Examples.file(dir, "mlp-softmax.ir").toString(), "--device", "cpu", "--runs", "1",
                "--input", "x=" + x, "--weights", wf.toString(), "--out", dir.toString(), "--json");
        assertEquals(0, r.code(), r.err());
        double e = relErr(Npy.read(dir.resolve("p.npy")).toDoubles(), reference(g, Weights.of(w), in));
        assertTrue(e < 1e-5, "rel err " + e);
        assertTrue(r.out().contains("\"inputs_from_files\": [\"x\"]"), r.out());
        assertTrue(r.out().contains("\"shape\": [3, 37, 50]"), r.out());
        assertEquals(1, r.out().strip().lines().count(), "--json is one object: " + r.out());
    }

    @Test
    void everyModeGivesTheSameOutputOnTheCpu() {
        Path ir = Examples.file(dir, "mlp-softmax.ir");
        String sha = null;
        for (String mode : List.of("eager", "compiled", "graph")) {
            MainTest.Run r = MainTest.run("run", ir.toString(), "--device", "cpu", "--runs", "1", "--mode", mode, "--seed", "3");
            assertEquals(0, r.code(), r.err());
            Matcher m = Pattern.compile("sha256 ([0-9a-f]{12})").matcher(r.out());
            assertTrue(m.find(), r.out());
            if (sha != null) {
                assertEquals(sha, m.group(1), mode);
            }
            sha = m.group(1);
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            no file               |                                       | 2 | lantern run: expected one FILE.ir
            two files             | IR IR                                 | 2 | lantern run: expected one FILE.ir, found 2
            missing file          | /no/such.ir                           | 1 | lantern run: no such file: /no/such.ir
            IR that does not parse| BAD.ir                                | 1 | BAD.ir: 
            unknown device        | IR --device tpu                       | 2 | lantern run: unknown device 'tpu'
            bad mode              | IR --mode fast                        | 2 | lantern run: unknown mode 'fast'
            bad amp               | IR --amp fp8                          | 2 | lantern run: --amp takes none, bf16 or f16
            bad runs              | IR --runs 0                           | 2 | lantern run: --runs must be in [1, 1000000]
            input without =       | IR --input x.npy                      | 2 | lantern run: --input takes NAME=FILE.npy
            input twice           | IR --input x=a.npy --input x=b.npy    | 2 | lantern run: --input x is given twice
            input naming no input | IR --input y=X                        | 2 | has no input named 'y' (its inputs: x)
            input missing file    | IR --input x=/no/x.npy                | 1 | lantern run: /no/x.npy: no such file
            input not npy         | IR --input x=IR                       | 1 | not an .npy file
            input wrong shape     | IR --input x=WRONG                    | 1 | the graph declares f32[3,37,50], the file holds f32[3,37,49]
            input of integers     | IR --input x=INTS                     | 1 | floats and integers do not convert
            missing weights       | IR --weights /no/w.safetensors        | 1 | lantern run: --weights /no/w.safetensors: no such file or folder
            out is a file         | IR --out IR                           | 1 | not a folder
            unknown option        | IR --colour                           | 2 | lantern run: unknown option --colour
            """)
    void badInputIsOneLine(String what, String argLine, int code, String message) throws IOException {
        Path ir = Examples.file(dir, "mlp-softmax.ir");
        Files.writeString(dir.resolve("BAD.ir"), "graph @g {\n  %x = input : f32[4\n}\n");
        Npy.write(dir.resolve("x.npy"), Lantern.compile(mlp()).randomInputs(1).get("x"));
        Npy.write(dir.resolve("wrong.npy"), Tensor.allocate(dev.lantern.ir.DType.F32, dev.lantern.ir.Shape.of(3, 37, 49)));
        Npy.write(dir.resolve("ints.npy"), Tensor.allocate(dev.lantern.ir.DType.I64, dev.lantern.ir.Shape.of(3, 37, 50)));
        String line = argLine == null ? "" : argLine.replace("IR", ir.toString()).replace("BAD", dir.resolve("BAD").toString())
                .replace("WRONG", dir.resolve("wrong.npy").toString()).replace("INTS", dir.resolve("ints.npy").toString())
                .replace("=X", "=" + dir.resolve("x.npy"));
        List<String> args = new java.util.ArrayList<>(List.of("run"));
        if (!line.isBlank()) {
            args.addAll(List.of(line.split(" ")));
        }
        MainTest.Run r = MainTest.run(args.toArray(String[]::new));
        assertEquals(code, r.code(), () -> what + ": " + r.err());
        assertTrue(r.err().contains(message.replace("BAD", dir.resolve("BAD").toString())), () -> what + ": " + r.err());
        assertEquals(1, r.err().strip().lines().count(), () -> what + ": " + r.err());
        assertFalse(r.err().contains("\tat "), "no stack trace");
    }

    @Test
    void cudaWithoutAGpuIsABadCommandLineLikeDemo() {
        assumeTrue(dev.lantern.cuda.driver.CudaDevice.count() == 0, "a GPU is present: the run would succeed");
        MainTest.Run r = MainTest.run("run", Examples.file(dir, "mlp-softmax.ir").toString(), "--device", "cuda");
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().startsWith("lantern run: --device cuda: "), r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
    }
}
