package dev.lantern.cuda.gpu;

import dev.lantern.reference.Accuracy;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.Bindings;
import dev.lantern.Device;
import dev.lantern.Lantern;
import dev.lantern.Program;
import dev.lantern.RunMode;
import dev.lantern.Session;
import dev.lantern.SessionStats;
import dev.lantern.Weights;
import dev.lantern.engine.CompileOptions;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Tensor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The public API on the GPU (backend found by ServiceLoader), on a graph that is not a transformer
 * block (examples/mlp-softmax.ir): every mode, f32 and bf16 AMP, against the float64 reference on
 * fresh seeded weights and inputs, with the graph session's replays counted.
 */
@Tag("gpu")
class LanternApiGpuTest {
    static Graph mlp() throws IOException {
        Path p = Path.of("../examples/mlp-softmax.ir");
        if (!Files.exists(p)) {
            p = Path.of("examples/mlp-softmax.ir");
        }
        return IrParser.parse(Files.readString(p));
    }


    @ParameterizedTest
    @EnumSource(CompileOptions.Amp.class)
    void everyModeOnCudaMatchesTheFloat64Reference(CompileOptions.Amp amp) throws IOException {
        Gpu.device(); // the tier's shared device: fails loudly without a GPU
        assertTrue(Lantern.devices().contains(Device.cuda(0)), "the cuda backend sees GPU 0: " + Lantern.devices());
        Graph g = mlp();
        Program p = Lantern.compile(g, CompileOptions.defaults().withTarget("cuda").withAmp(amp));
        long seed = System.nanoTime();
        Weights w = Weights.random(seed);
        Map<String, Tensor> in = p.randomInputs(seed + 1);
        Map<String, Tensor> all = new HashMap<>(Bindings.parameters(g, w));
        all.putAll(in);
        double[] ref = ReferenceInterpreter.run(g, all).get("p").data();
        double tol = amp == CompileOptions.Amp.NONE ? 1e-4 : 2e-2;
        for (RunMode mode : RunMode.values()) {
            try (Session s = p.load(Device.cuda(0), w, mode)) {
                for (int i = 0; i < 3; i++) {
                    double e = Accuracy.relErr(s.run(in).get("p").toDoubles(), ref);
                    assertTrue(e < tol, amp + " " + mode + " forward " + i + ": rel err " + e + " (seed " + seed + ")");
                }
                SessionStats st = s.stats();
                assertEquals(3, st.forwards());
                if (mode == RunMode.GRAPH) {
                    assertEquals(3, st.graphReplays() + st.graphFallbacks().values().stream().mapToLong(Long::longValue).sum(),
                            "every graph forward replayed or was counted as a fallback: " + st);
                    assertTrue(st.graphReplays() >= 2, "replays " + st);
                } else {
                    assertEquals(0, st.graphReplays());
                }
            }
        }
    }
}
