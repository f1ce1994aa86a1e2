package dev.lantern;

import dev.lantern.reference.Accuracy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.engine.CompileOptions;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.LanternException;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Tensor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The public API on the CPU, on a graph that is not a transformer block (examples/mlp-softmax.ir):
 * every mode against the float64 reference on fresh seeded inputs and weights, the statistics, and
 * every kind of bad call as a typed error.
 */
class LanternApiTest {
    static Graph mlp() throws IOException {
        Path p = Path.of("../examples/mlp-softmax.ir");
        return IrParser.parse(Files.readString(p));
    }

    static double[] reference(Graph g, Weights w, Map<String, Tensor> inputs) {
        Map<String, Tensor> all = new HashMap<>(Bindings.parameters(g, w));
        all.putAll(inputs);
        return ReferenceInterpreter.run(g, all).get(g.outputs().getFirst()).data();
    }


    @Test
    void everyModeMatchesTheFloat64Reference() throws IOException {
        Graph g = mlp();
        Program p = Lantern.compile(g);
        long seed = System.nanoTime();
        Weights w = Weights.random(seed);
        Map<String, Tensor> in = p.randomInputs(seed + 1);
        double[] ref = reference(g, w, in);
        for (RunMode mode : RunMode.values()) {
            try (Session s = p.load(Device.cpu(), w, mode)) {
                Map<String, Tensor> out = s.run(in);
                assertEquals(p.outputNames(), java.util.List.copyOf(out.keySet()));
                Tensor y = out.get("p");
                assertEquals(g.type("p").shape(), y.shape());
                double e = Accuracy.relErr(y.toDoubles(), ref);
                assertTrue(e < 1e-5, mode + ": rel err " + e + " (seed " + seed + ")");
                s.run(in);
                SessionStats st = s.stats();
                assertEquals(2, st.forwards());
                assertEquals(0, st.graphReplays());
                // the CPU has no graphs: a graph session's forwards are counted fallbacks, never silent
                assertEquals(mode == RunMode.GRAPH ? Map.of("cpu", 2L) : Map.of(), st.graphFallbacks());
            }
        }
    }

    @Test
    void ampRunsInBf16WithinItsTolerance() throws IOException {
        Graph g = mlp();
        Program p = Lantern.compile(g, CompileOptions.defaults().withAmp(CompileOptions.Amp.BF16));
        Weights w = Weights.random(7);
        Map<String, Tensor> in = p.randomInputs(8);
        try (Session s = p.load(Device.cpu(), w)) {
            double e = Accuracy.relErr(s.run(in).get("p").toDoubles(), reference(g, w, in));
            assertTrue(e > 0 && e < 2e-2, "bf16 rel err " + e);
        }
    }

    @Test
    void randomWeightsAreSeededAndNeverZero() throws IOException {
        Graph g = mlp();
        Map<String, Tensor> a = Bindings.parameters(g, Weights.random(3));
        Map<String, Tensor> b = Bindings.parameters(g, Weights.random(3));
        Map<String, Tensor> c = Bindings.parameters(g, Weights.random(4));
        for (String k : a.keySet()) {
            assertEquals(java.util.Arrays.toString(a.get(k).toFloats()), java.util.Arrays.toString(b.get(k).toFloats()));
            assertTrue(!java.util.Arrays.equals(a.get(k).toFloats(), c.get(k).toFloats()), k);
        }
        // a [50, 96] weight: std 1/sqrt(50)
        double[] w1 = a.get("fc1.weight").toDoubles();
        double ss = 0;
        for (double v : w1) {
            ss += v * v;
        }
        double std = Math.sqrt(ss / w1.length);
        assertTrue(Math.abs(std - 1 / Math.sqrt(50)) < 0.01, "std " + std);
    }

    @Test
    void badCallsAreTypedErrors() throws IOException {
        Program p = Lantern.compile(mlp());
        assertThrows(LanternException.class, () -> Device.parse("gpu0"));
        assertThrows(LanternException.class, () -> Device.parse("cuda:x"));
        assertEquals(Device.cuda(3), Device.parse("cuda:3"));
        assertThrows(LanternException.class, () -> RunMode.parse("fast"));
        // lantern-core alone has no CUDA backend
        DeviceUnavailableException e = assertThrows(DeviceUnavailableException.class, () -> p.load(Device.cuda(0), Weights.random(0)));
        assertTrue(e.getMessage().contains("cuda"), e.getMessage());
        WeightsException we = assertThrows(WeightsException.class, () -> p.load(Device.cpu(), Weights.of(Map.of())));
        assertTrue(we.getMessage().contains("fc1.weight"), we.getMessage());
        Map<String, Tensor> wrong = new HashMap<>(Bindings.parameters(p.graph(), Weights.random(0)));
        wrong.put("fc2.bias", Tensor.allocate(dev.lantern.ir.DType.F32, dev.lantern.ir.Shape.of(49)));
        WeightsException shape = assertThrows(WeightsException.class, () -> p.load(Device.cpu(), Weights.of(wrong)));
        assertTrue(shape.getMessage().contains("fc2.bias"), shape.getMessage());
        try (Session s = p.load(Device.cpu(), Weights.random(0))) {
            LanternException missing = assertThrows(LanternException.class, () -> s.run(Map.of()));
            assertTrue(missing.getMessage().contains("'x'"), missing.getMessage());
            Map<String, Tensor> extra = new HashMap<>(p.randomInputs(0));
            extra.put("y", extra.get("x"));
            assertThrows(LanternException.class, () -> s.run(extra));
            s.close();
            assertThrows(LanternException.class, () -> s.run(p.randomInputs(0)));
        }
        assertEquals(Device.cpu(), Lantern.devices().getFirst());
    }
}
