package dev.lantern.frontend.hf;

import dev.lantern.Device;
import dev.lantern.Lantern;
import dev.lantern.Program;
import dev.lantern.Session;
import dev.lantern.Weights;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Npy;
import dev.lantern.tensor.Tensor;
import dev.lantern.weights.SafetensorsDType;
import dev.lantern.weights.SafetensorsModel;
import dev.lantern.weights.SafetensorsWriter;
import dev.lantern.weights.TensorView;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A checkpoint stored in bf16 keeps its bytes: the compiled graph holds no f32 copy of a weight that
 * is only gathered (an untied embedding), under AMP no f32 copy of any matrix, and a tied table once;
 * without AMP every matrix is converted once at bind time (no cast kernel per forward). The numbers
 * are those of the same weights widened to f32 (bf16 widens exactly).
 */
class HfStoredDtypeTest {
    /** The fixture's weights rounded to bf16, written as a bf16 checkpoint. */
    static Path bf16Copy(String family, Path tmp) throws Exception {
        Path src = HfModelTest.HF.resolve(family);
        Files.copy(src.resolve("config.json"), tmp.resolve("config.json"));
        SafetensorsWriter w = new SafetensorsWriter();
        try (SafetensorsModel m = SafetensorsModel.open(src)) {
            for (String name : m.names()) {
                TensorView t = m.tensor(name);
                Tensor low = Tensor.wrap(t.dtype().irType(), t.irShape(), t.data()).cast(DType.BF16);
                w.add(name, SafetensorsDType.BF16, t.shape(), low.segment());
            }
        }
        w.write(tmp.resolve(SafetensorsModel.SINGLE_FILE));
        return tmp;
    }

    @ParameterizedTest
    @ValueSource(strings = {"llama", "gpt2"})
    void bf16CheckpointStaysBf16(String family, @TempDir Path tmp) throws Exception {
        HfModel model = HfModel.open(bf16Copy(family, tmp));
        Graph g = model.graph(2, 8);
        String table = family.equals("llama") ? "model.embed_tokens.weight" : "transformer.wte.weight";

        CompiledModel f32 = Compiler.compile(g, CompileOptions.defaults());
        assertTrue(f32.graph().nodes().stream().noneMatch(n -> n.op() == Op.CAST && f32.graph().node(n.input(0)).op() == Op.PARAM),
                "no parameter cast per forward without AMP:\n" + f32.graph());
        Node f32Table = param(f32.graph(), table);
        // an untied table is only gathered, so it stays bf16; GPT-2's tied one feeds the f32 head too
        assertEquals(family.equals("llama") ? DType.BF16 : DType.F32, f32Table.type().dtype(), f32Table.toString());

        CompiledModel amp = Compiler.compile(g, CompileOptions.defaults().withTarget("cuda").withAmp(CompileOptions.Amp.BF16));
        for (Node p : amp.graph().params()) {
            boolean vector = p.type().shape().rank() == 1;
            assertTrue(vector || p.type().dtype() == DType.BF16, "every matrix in its stored bf16 under AMP: " + p);
        }
        assertEquals(1, amp.graph().params().stream().filter(p -> p.attrs().getString("name", "").equals(table)).count(),
                "the embedding table bound once:\n" + amp.graph());

        // numbers: the compiled CPU run (f32 and AMP) against the float64 reference on the widened weights
        Path src = HfModelTest.HF.resolve(family);
        Tensor ids = Npy.read(src.resolve("input_ids.npy"));
        Map<String, Tensor> inputs = Map.of("input_ids", ids);
        double[] ref;
        try (Weights w = model.weights()) {
            Map<String, Tensor> sources = new LinkedHashMap<>(inputs);
            for (Node p : g.params()) {
                String name = p.attrs().getString("name", p.name());
                sources.put(name, w.resolve(name, p.type()));
            }
            ref = ReferenceInterpreter.run(g, sources).values().iterator().next().data();
        }
        for (CompileOptions.Amp a : List.of(CompileOptions.Amp.NONE, CompileOptions.Amp.BF16)) {
            Program p = Lantern.compile(g, CompileOptions.defaults().withAmp(a));
            try (Weights w = model.weights(); Session s = p.load(Device.cpu(), w)) {
                double err = HfModelTest.maxRelErr(ref, s.run(inputs).values().iterator().next().toDoubles());
                assertTrue(err <= (a == CompileOptions.Amp.NONE ? 1e-5 : 3e-2), family + " " + a + ": max relative error " + err);
            }
        }
    }

    private static Node param(Graph g, String name) {
        return g.params().stream().filter(p -> p.attrs().getString("name", "").equals(name)).findFirst().orElseThrow(
                () -> new AssertionError("no parameter " + name + " in\n" + g));
    }
}
